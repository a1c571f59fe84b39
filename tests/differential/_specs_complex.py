"""Argument generators for complex numbers and ``torch.fft`` (``sig(b) -> (args, kwargs)``, as in
:mod:`_op_specs`).

``COMPLEX_CASES`` runs ops that accept complex tensors with complex (and mixed real/complex)
operands; ``FFT`` holds the generators of the ``torch.fft`` functions. The op table's own entries
for the complex-number ops (``real``, ``view_as_real``, ...) are in :data:`EXPLICIT`.
"""
from ._inputs import ALL_DTYPES, COMPLEX_DTYPES, FLOAT_DTYPES
from ._specs_common import _kw, ndim

MIXED = COMPLEX_DTYPES + ALL_DTYPES
# Real dtypes a complex tensor meets in the mixed cases (float16 has no complex partner here).
REAL_PARTNERS = ("bool", "int64", "float32", "float64")


def complex_tensor(b, shape=None, **kw):
    return b.tensor(shape, pool=COMPLEX_DTYPES, **kw)


def complex_unary(b):
    return [complex_tensor(b)], {}


def maybe_complex_unary(b):
    return [b.tensor(pool=COMPLEX_DTYPES if b.chance(0.7) else ALL_DTYPES)], {}


def complex_binary(b):
    x = complex_tensor(b)
    if b.chance(0.2):
        y = b.choice(["2", "-1.5", "complex(0.5, -2.0)", "1j", "True"])
    else:
        pool = COMPLEX_DTYPES if b.chance(0.6) else REAL_PARTNERS
        y = b.tensor(b.broadcast_partner(b.shapes[x]), pool=pool)
    return ([y, x] if b.chance(0.3) else [x, y]), {}


def complex_pow(b):
    return [complex_tensor(b), b.choice(["2", "3", "0.5", "-1", "0"])], {}


def complex_matmul(b):
    n, k, m = b.int_in(0, 3), b.int_in(1, 3), b.int_in(1, 3)
    batch = b.choice([(), (2,)])
    dtype = b.choice(COMPLEX_DTYPES)
    return [b.tensor(batch + (n, k), dtype), b.tensor(batch + (k, m), dtype)], {}


def complex_reduction(b):
    x = complex_tensor(b)
    if b.chance(0.4):
        return [x], {}
    return [x, str(b.dim(ndim(b, x)))], _kw(keepdim=b.choice(["True", "False"]) if b.chance(0.5) else None)


def complex_reshape(b):
    x = complex_tensor(b)
    return [x, "(-1,)"], {}


def complex_transpose(b):
    x = complex_tensor(b, min_ndim=2)
    return [x, "0", "-1"], {}


def complex_join(b):
    x = complex_tensor(b)
    y = b.tensor(b.shapes[x], pool=COMPLEX_DTYPES if b.chance(0.7) else REAL_PARTNERS)
    return [f"[{x}, {y}]"], {}


def view_as_complex(b):
    shape = b.shape(max_ndim=3) + (2,)
    dtype = b.choice(["float32", "float64"]) if b.chance(0.9) else b.dtype()
    layout = "contiguous" if b.chance(0.8) else None
    return [b.tensor(shape, dtype, layout=layout)], {}


def complex_from_parts(b):
    dtype = b.choice(["float32", "float64"]) if b.chance(0.9) else b.dtype(FLOAT_DTYPES)
    x = b.tensor(dtype=dtype)
    other = dtype if b.chance(0.9) else b.dtype(FLOAT_DTYPES)
    return [x, b.tensor(b.broadcast_partner(b.shapes[x]) if b.chance(0.2) else b.shapes[x], other)], {}


def polar(b):
    dtype = b.choice(["float32", "float64"]) if b.chance(0.9) else b.dtype(FLOAT_DTYPES)
    x = b.tensor(dtype=dtype)
    return [x, b.tensor(b.shapes[x], dtype)], {}


# Ops run with complex operands: {name: (forms, generator)}.
COMPLEX_CASES = {
    "add": (["function", "method"], complex_binary), "sub": (["function", "method"], complex_binary),
    "mul": (["function", "method"], complex_binary), "div": (["function", "method"], complex_binary),
    "neg": (["function", "method"], complex_unary), "reciprocal": (["function", "method"], complex_unary),
    "exp": (["function", "method"], complex_unary), "log": (["function", "method"], complex_unary),
    "sqrt": (["function", "method"], complex_unary), "sin": (["function", "method"], complex_unary),
    "cos": (["function", "method"], complex_unary), "tanh": (["function", "method"], complex_unary),
    "sinh": (["function", "method"], complex_unary), "cosh": (["function", "method"], complex_unary),
    "abs": (["function", "method"], complex_unary), "pow": (["function", "method"], complex_pow),
    "matmul": (["function", "method"], complex_matmul), "sum": (["function", "method"], complex_reduction),
    "mean": (["function", "method"], complex_reduction), "reshape": (["function", "method"], complex_reshape),
    "transpose": (["function", "method"], complex_transpose), "cat": (["function"], complex_join),
    "stack": (["function"], complex_join), "clone": (["function", "method"], complex_unary),
    **{name: (["function", "method"], complex_unary) for name in (
        "tan", "asin", "acos", "atan", "asinh", "acosh", "atanh", "exp2", "expm1", "log2", "log10", "log1p",
        "rsqrt", "square", "cumsum_all", "trace")},
    "where": (["function"], lambda b: complex_where(b)), "addcmul": (["function", "method"], lambda b: complex_ternary(b)),
    "addcdiv": (["function", "method"], lambda b: complex_ternary(b)),
    "einsum": (["function"], lambda b: complex_einsum(b)), "addmm": (["function", "method"], lambda b: complex_addmm(b)),
}
COMPLEX_CASES["cumsum"] = (["function", "method"], lambda b: complex_cumsum(b))
del COMPLEX_CASES["cumsum_all"]
COMPLEX_CASES["trace"] = (["function", "method"], lambda b: ([complex_tensor(b, (b.int_in(0, 3), b.int_in(0, 3)))], {}))


def complex_cumsum(b):
    x = complex_tensor(b, min_ndim=1)
    return [x, str(b.dim(ndim(b, x)))], {}


def complex_where(b):
    x = complex_tensor(b)
    shape = b.shapes[x]
    cond = b.tensor(shape, "bool", grad=False)
    other = b.tensor(shape, pool=COMPLEX_DTYPES if b.chance(0.7) else REAL_PARTNERS)
    return [cond, x, other], {}


def complex_ternary(b):
    x = complex_tensor(b)
    shape, dtype = b.shapes[x], b.dtypes[x]
    return [x, b.tensor(shape, dtype), b.tensor(shape, dtype)], _kw(value=b.choice(["2", "-0.5"]) if b.chance(0.4)
                                                                        else None)


def complex_einsum(b):
    dtype = b.choice(COMPLEX_DTYPES)
    n, k, m = b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3)
    return ["'ij,jk->ik'", b.tensor((n, k), dtype), b.tensor((k, m), dtype)], {}


def complex_addmm(b):
    dtype = b.choice(COMPLEX_DTYPES)
    n, k, m = b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3)
    return [b.tensor((n, m), dtype), b.tensor((n, k), dtype), b.tensor((k, m), dtype)], _kw(
        alpha=b.choice(["2", "0.5"]) if b.chance(0.3) else None, beta=b.choice(["0", "1.5"]) if b.chance(0.3) else None)

# The op table's complex-number ops (also called with real tensors, which some refuse).
EXPLICIT = {
    "real": maybe_complex_unary, "imag": maybe_complex_unary, "angle": maybe_complex_unary,
    "conj": maybe_complex_unary, "conj_physical": maybe_complex_unary, "resolve_conj": maybe_complex_unary,
    "resolve_neg": maybe_complex_unary, "view_as_real": maybe_complex_unary, "view_as_complex": view_as_complex,
    "complex": complex_from_parts, "polar": polar, "is_conj": maybe_complex_unary, "is_neg": maybe_complex_unary,
    "is_complex": maybe_complex_unary, "cfloat": maybe_complex_unary, "cdouble": maybe_complex_unary,
}


# ---------------------------------------------------------------- torch.fft
def _signal(b, real_only=False, min_ndim=1):
    pool = ("float32", "float64") if real_only or b.chance(0.4) else COMPLEX_DTYPES
    if b.chance(0.05):
        pool = ("int64", "float16")
    return b.tensor(pool=pool, min_ndim=min_ndim, max_ndim=3)


def _norm(b):
    return b.choice(["'backward'", "'ortho'", "'forward'", None, None]) if b.chance(0.95) else "'sideways'"


def fft_1d(real_only=False):
    def sig(b):
        x = _signal(b, real_only)
        n = b.int_in(1, 6) if b.chance(0.4) else (0 if b.chance(0.03) else None)
        return [x], _kw(n=None if n is None else str(n), dim=str(b.dim(ndim(b, x))) if b.chance(0.5) else None,
                        norm=_norm(b))
    return sig


def fft_nd(two_d, real_only=False):
    def sig(b):
        x = _signal(b, real_only, min_ndim=2 if two_d else 1)
        d = ndim(b, x)
        dims = b.dims(d) if not two_d else tuple(sorted({b.dim(d, allow_bad=False) for _ in range(2)}))
        if two_d and len(dims) != 2:
            dims = (-2, -1)
        use_dim = b.chance(0.5)
        s = tuple(b.int_in(1, 5) for _ in (dims if use_dim else range(b.int_in(1, d) if d else 1)))
        kw = _kw(s=repr(s) if b.chance(0.4) else None, dim=repr(dims) if use_dim and dims else None,
                 norm=_norm(b))
        return [x], kw
    return sig


def fftfreq(b):
    n = b.int_in(0, 7)
    return [str(n)], _kw(d=b.choice(["0.5", "2.0", "0.1"]) if b.chance(0.5) else None,
                         dtype=b.choice(["T.float64", "T.float32"]) if b.chance(0.5) else None)


def fftshift(b):
    x = b.tensor(pool=MIXED, max_ndim=3)
    return [x], _kw(dim=str(b.dim(ndim(b, x))) if ndim(b, x) and b.chance(0.5) else None)


FFT = {
    "fft": fft_1d(), "ifft": fft_1d(), "rfft": fft_1d(True), "irfft": fft_1d(), "hfft": fft_1d(),
    "ihfft": fft_1d(True),
    "fft2": fft_nd(True), "ifft2": fft_nd(True), "rfft2": fft_nd(True, True), "irfft2": fft_nd(True),
    "hfft2": fft_nd(True), "ihfft2": fft_nd(True, True),
    "fftn": fft_nd(False), "ifftn": fft_nd(False), "rfftn": fft_nd(False, True), "irfftn": fft_nd(False),
    "hfftn": fft_nd(False), "ihfftn": fft_nd(False, True),
    "fftfreq": fftfreq, "rfftfreq": fftfreq, "fftshift": fftshift, "ifftshift": fftshift,
}


# ---------------------------------------------------------------- windows and the short-time transform
def window(b):
    n = b.int_in(0, 9) if b.chance(0.97) else -1
    kw = _kw(dtype=b.choice(["T.float64", "T.float32", "T.int64"]) if b.chance(0.5) else None)
    return [str(n), b.choice(["True", "False"])], kw


def kaiser_window(b):
    args, kw = window(b)
    return args + ([b.choice(["12.0", "5.0", "0.5"])] if b.chance(0.5) else []), kw


def _stft_options(b, n_fft, part):
    hop = b.int_in(1, n_fft) if b.chance(0.6) else None
    win = b.int_in(1, n_fft) if b.chance(0.3) else None
    window = f"T.hann_window({win or n_fft}, dtype=T.{part}, device=dev)" if b.chance(0.6) else None
    return _kw(hop_length=None if hop is None else str(hop), win_length=None if win is None else str(win),
               window=window, normalized=b.choice(["True", "False"]) if b.chance(0.3) else None)


def stft(b):
    n_fft = b.int_in(2, 12)
    length = b.int_in(n_fft, 40)
    pool = ("float64", "float32") if b.chance(0.7) else COMPLEX_DTYPES
    x = b.tensor(b.choice([(length,), (2, length)]), pool=pool, layout="contiguous")
    kw = _stft_options(b, n_fft, "float32" if b.dtypes[x] in ("float32", "complex64") else "float64")
    kw.update(_kw(center=b.choice(["True", "False"]) if b.chance(0.4) else None,
                  pad_mode=b.choice(["'reflect'", "'constant'", "'replicate'", "'circular'"]) if b.chance(0.4) else None,
                  return_complex="True" if b.chance(0.9) else None))
    if b.dtypes[x] in COMPLEX_DTYPES or b.chance(0.2):
        kw["onesided"] = "False"
    return [x, str(n_fft)], kw


def istft(b):
    n_fft = b.int_in(2, 12)
    hop = max(1, n_fft // 4)
    frames = b.int_in(1, 8)
    onesided = b.chance(0.7)
    n_freq = n_fft // 2 + 1 if onesided else n_fft
    x = b.tensor(b.choice([(n_freq, frames), (2, n_freq, frames)]), pool=COMPLEX_DTYPES, layout="contiguous")
    part = "float32" if b.dtypes[x] == "complex64" else "float64"
    kw = _kw(hop_length=str(hop), window=f"T.hann_window({n_fft}, dtype=T.{part}, device=dev)",
             onesided=None if onesided else "False",
             length=str(b.int_in(1, n_fft + hop * (frames - 1))) if b.chance(0.4) else None,
             return_complex="True" if not onesided and b.chance(0.3) else None)
    return [x, str(n_fft)], kw


EXPLICIT.update({
    "hann_window": window, "hamming_window": window, "blackman_window": window, "bartlett_window": window,
    "kaiser_window": kaiser_window, "stft": stft, "istft": istft,
})


# ---------------------------------------------------------------- torch.signal.windows
def signal_window(**options):
    """``T.signal.windows.<name>(M, sym=..., dtype=..., <option>=...)``; ``options`` maps each
    keyword to the sources drawn for it (occasionally a value both libraries refuse)."""
    def sig(b):
        m = b.int_in(0, 9) if b.chance(0.97) else -1
        kw = _kw(sym=b.choice(["True", "False"]) if b.chance(0.7) else None,
                 dtype=b.choice(["T.float64", "T.float32", "T.int64" if b.chance(0.1) else None]))
        for name, sources in options.items():
            if b.chance(0.6):
                kw[name] = b.choice(sources)
        if kw.get("center") not in (None, "None") and b.chance(0.9):
            kw["sym"] = "False"
        return [str(m)], kw
    return sig


SIGNAL_WINDOWS = {
    "bartlett": signal_window(), "blackman": signal_window(), "cosine": signal_window(),
    "hamming": signal_window(), "hann": signal_window(), "nuttall": signal_window(),
    "gaussian": signal_window(std=["1.0", "0.4", "3.5", "0"]),
    "exponential": signal_window(center=["None", "1.0", "2.5"], tau=["1.0", "0.5", "4.0", "-1.0"]),
    "general_cosine": signal_window(a=["[0.5, 0.5]", "(0.42, 0.5, 0.08)", "[1.0]", "0.5"]),
    "general_hamming": signal_window(alpha=["0.54", "0.5", "0.8"]),
    "kaiser": signal_window(beta=["12.0", "5.0", "0.0", "-1.0"]),
}


# ---------------------------------------------------------------- complex reductions, sgn, vdot and norms
def complex_vdot(b):
    n = b.int_in(0, 5)
    dtype = b.choice(COMPLEX_DTYPES)
    return [b.tensor((n,), dtype), b.tensor((n,), dtype)], {}


def complex_prod(b):
    x = complex_tensor(b, max_ndim=3)
    if b.chance(0.4):
        return [x], {}
    return [x, str(b.dim(ndim(b, x)))], _kw(keepdim=b.choice(["True", "False"]) if b.chance(0.5) else None)


def complex_var(b):
    x = complex_tensor(b, max_ndim=3)
    n = ndim(b, x)
    if b.chance(0.2):
        return [x], {}
    dims = (b.dims(n) or None) if b.chance(0.5) else b.dim(n)    # not dim=(): a torch bug (see _known)
    return [x, repr(dims) if isinstance(dims, tuple) else str(dims)], _kw(
        correction=b.choice(["0", "1", "2"]) if b.chance(0.5) else None,
        keepdim=b.choice(["True", "False"]) if b.chance(0.5) else None)


def complex_vector_norm(b):
    x = complex_tensor(b, max_ndim=3)
    ord_ = b.choice(["2", "1", "3", "0", "float('inf')", "-float('inf')", "0.5"])
    kw = _kw(dim=repr(b.dims(ndim(b, x))) if b.chance(0.5) else None,
             keepdim=b.choice(["True", "False"]) if b.chance(0.3) else None,
             dtype=b.choice(["T.complex128", "T.float64"]) if b.chance(0.1) else None)
    return [x, ord_], kw


def complex_matrix_norm(b):
    x = complex_tensor(b, min_ndim=2, max_ndim=3)
    ord_ = b.choice(["'fro'", "1", "-1", "float('inf')", "-float('inf')", "'nuc'", "2", "-2"])
    return [x, ord_], _kw(keepdim=b.choice(["True", "False"]) if b.chance(0.3) else None)


def complex_norm(b):
    x = complex_tensor(b, max_ndim=3)
    return [x], _kw(dim=str(b.dim(ndim(b, x))) if b.chance(0.5) and ndim(b, x) else None)


COMPLEX_CASES.update({
    "sgn": (["function", "method"], complex_unary), "vdot": (["function", "method"], complex_vdot),
    "prod": (["function", "method"], complex_prod),
    "cumprod": (["function", "method"], complex_cumsum),
    "var": (["function", "method"], complex_var), "std": (["function", "method"], complex_var),
    "var_mean": (["function"], complex_var), "std_mean": (["function"], complex_var),
    "norm": (["function", "method"], complex_norm),
})
def complex_matrix(square=False, **options):
    """A (batch of) complex matrices, with the given keyword sources sometimes drawn."""
    def sig(b):
        m = b.int_in(1, 4)
        n = m if square else b.int_in(1, 4)
        x = b.tensor(b.choice([(), (2,)]) + (m, n), b.choice(COMPLEX_DTYPES))
        kw = {k: b.choice(v) for k, v in options.items() if b.chance(0.5)}
        return [x], kw
    return sig


def complex_transpose_view(b):
    return [complex_tensor(b, min_ndim=2, max_ndim=3)], {}


COMPLEX_CASES.update({
    "adjoint": (["function", "method"], complex_transpose_view), "mH": (["property"], complex_transpose_view),
    "H": (["property"], lambda b: ([complex_tensor(b, (b.int_in(1, 3), b.int_in(1, 3)))], {})),
})
# torch.linalg functions run with complex operands: {name: generator}. The backward of a loss over
# the real and imaginary parts of singular or eigen vectors depends on their phases: both refuse it.
COMPLEX_LINALG = {
    "vector_norm": complex_vector_norm, "matrix_norm": complex_matrix_norm, "norm": complex_norm,
    "svd": complex_matrix(full_matrices=["True", "False"]), "svdvals": complex_matrix(),
    "qr": complex_matrix(mode=["'reduced'", "'complete'", "'r'"]), "eigh": complex_matrix(True, UPLO=["'L'", "'U'"]),
    "eigvalsh": complex_matrix(True), "pinv": complex_matrix(hermitian=["False", "True"]),
    "matrix_rank": complex_matrix(hermitian=["False", "True"]),
}
