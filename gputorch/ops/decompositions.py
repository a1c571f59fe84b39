"""Matrix decompositions: Cholesky, QR, symmetric eigendecomposition and SVD (batched, with
gradients).

Forwards call the backend's LAPACK-style routines (``xp.linalg``: the same names in NumPy and
CuPy); backwards are Tensor math next to them, on the saved outputs, so they are differentiable
again (``create_graph=True``).
"""
from .._dispatch import apply
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.node import Node, SavedTensor
from ._common import xp_of
from ._linalg_common import SCALAR_NAME, mH, mT, write_out
from ..return_types import linalg_cholesky_ex, linalg_eigh, linalg_qr, linalg_svd
from .linalg_triangular import solve_triangular
from .matrix_inverse import LinAlgError, _check_square, solve
from ..amp.autocast_mode import autocast_function

__all__ = ["cholesky", "cholesky_ex", "qr", "eigh", "eigvalsh", "svd", "svdvals"]


def _int32(xp, values, shape):
    return xp.asarray(values, dtype="int32").reshape(shape)


def _check_matrix(name, A, kernel=None):
    """``A`` must be a (batch of) floating matrices; half precision is refused as PyTorch's CPU
    kernel ``kernel`` refuses it (or with the generic message)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A._dtype._category not in (2, 3):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {SCALAR_NAME[A._dtype]}")
    if A._dtype.itemsize < 4:
        if kernel is not None:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAME[A._dtype]}'")
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {SCALAR_NAME[A._dtype]}")


def _is_zero(t):
    return not bool(t._data.any())


_PHASE_DEPENDENT_EIGH = ("linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
                         "multiplication by e^{i phi}. The specified loss function depends on this quantity, so "
                         "it is ill-defined.")
_EIGH_PHASE_ATOL = 1e-2   # PyTorch's eigh backward accepts phase terms up to 0.01 (absolute), then refuses
_PHASE_DEPENDENT_SVD = ("svd_backward: The singular vectors in the complex case are specified up to multiplication "
                        "by e^{i phi}. The specified loss function depends on this phase term, making it "
                        "ill-defined.")


def _require_phase_free(phases, message, atol=None):
    """Complex singular or eigen vectors are fixed only up to a phase ``e^{i phi}`` each: a loss
    whose gradient turns them along it (``phases``, the imaginary diagonal of ``V^H gV`` or its
    equivalent, not ~0) is ill-defined, and PyTorch refuses it with ``message``. ``atol``: an
    absolute bound on the phases (eigh's, as PyTorch: 1e-2 in every precision); else ~0 relative
    to the largest phase."""
    if phases is None:
        return
    size = abs(phases._data)
    if atol is None:
        finite = size[size == size]
        atol = 1e-6 * (max(1.0, float(finite.max())) if finite.size else 1.0)
    if not bool((size <= atol).all()):      # a NaN phase counts as one, as in PyTorch
        raise RuntimeError(message)


class MultiOutputNode(Node):
    """A node whose outputs (several) are saved for its backward, as the dispatcher saves a
    single output: :func:`keep_outputs` after ``apply``, :meth:`outputs` in backward."""

    saved_outputs = None

    def outputs(self):
        if self.saved_outputs is None:
            raise RuntimeError("Trying to backward through the graph a second time (or directly access saved "
                               "tensors after they have already been freed).")
        return [s.unpack(self) for s in self.saved_outputs]

    def _release_saved(self):
        super()._release_saved()
        self.saved_outputs = None


def keep_outputs(outputs):
    """Save the outputs of a :class:`MultiOutputNode` on it (when a graph was recorded)."""
    node = outputs[0]._grad_fn
    if isinstance(node, MultiOutputNode):
        node.saved_outputs = [SavedTensor(t, True, i) for i, t in enumerate(outputs)]
    return outputs


def _recording(A):
    return A.requires_grad and is_grad_enabled()


# ---------------------------------------------------------------- Cholesky
def _failed_minor(xp, m):
    """The order of the first leading minor of ``m`` that is not positive-definite (0 if none)."""
    for k in range(1, m.shape[-1] + 1):
        try:
            corner = xp.linalg.cholesky(m[:k, :k])[k - 1, k - 1]
        except xp.linalg.LinAlgError:
            return k
        if not bool(corner > 0):
            return k
    return 0


def cholesky_factor(xp, x):
    """``(L, info)``: lower factors of the arrays ``x`` (..., n, n) (lower triangle read) and, per
    matrix, the order of the first leading minor that is not positive-definite (0 when none;
    then that matrix's factor is NaN)."""
    try:
        factor = xp.linalg.cholesky(x)
        # CuPy raises only under cupyx.errstate(linalg='raise'); otherwise the failing column's
        # diagonal entry is left non-positive (or NaN), as LAPACK's potrf leaves it.
        if x.size == 0 or bool((xp.diagonal(factor, 0, -2, -1) > 0).all()):
            return factor, xp.zeros(x.shape[:-2], dtype="int32")
    except xp.linalg.LinAlgError:
        pass
    flat = x.reshape((-1,) + x.shape[-2:])
    factors = xp.full(flat.shape, float("nan"), dtype=x.dtype)
    info = []
    for i, m in enumerate(flat):
        k = _failed_minor(xp, m)
        if k == 0:
            factors[i] = xp.linalg.cholesky(m)
        info.append(k)
    return factors.reshape(x.shape), _int32(xp, info, x.shape[:-2])


class LinalgCholeskyExBackward0(Node):
    """``L = cholesky(A)``, ``A = L L^T`` (``U^T U`` when upper). With ``P`` the lower triangle of
    ``L^T gL`` with its diagonal halved: ``S = L^-T P L^-1``, ``gA = (S + S^T) / 2``."""

    saves_result = True

    def forward(ctx, a, upper, infos):
        xp = xp_of(a)
        x = xp.swapaxes(a._data, -1, -2) if upper else a._data
        factor, info = cholesky_factor(xp, x)
        infos.append(info)
        ctx.upper = upper
        return xp.swapaxes(factor, -1, -2).copy() if upper else factor

    def backward(ctx, grad):
        L = ctx.saved_result
        if ctx.upper:
            L, grad = mT(L), mT(grad)
        p = (mT(L) @ grad).tril()
        p = p - 0.5 * p.diagonal(0, -2, -1).diag_embed()
        s = solve_triangular(mT(L), solve_triangular(L, p, upper=False, left=False), upper=True)
        return 0.5 * (s + mT(s))


def _cholesky(name, A, upper):
    _check_matrix(name, A, "cholesky_cpu")
    _check_square(name, A)
    infos = []
    L = apply(LinalgCholeskyExBackward0, A, bool(upper), infos)
    return L, infos[0]


def _raise_cholesky(name, info, shape):
    bad = info.reshape(-1)
    for i in range(bad.shape[0]):
        k = int(bad[i])
        if k:
            where = f"(Batch element {i}): " if len(shape) > 2 else ""
            raise LinAlgError(f"{name}: {where}The factorization could not be completed because the input is not "
                              f"positive-definite (the leading minor of order {k} is not positive-definite).")


@autocast_function("cholesky")
def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor of symmetric positive-definite ``A`` (..., n, n): lower ``L`` with
    ``A = L L^T`` (only ``A``'s lower triangle is read), or upper ``U`` with ``A = U^T U`` (its
    upper triangle read). Raises :class:`LinAlgError` when a matrix is not positive-definite."""
    L, info = _cholesky("linalg.cholesky", A, upper)
    if info.any():
        _raise_cholesky("linalg.cholesky", info, A._data.shape)
    return write_out(L, out)


@autocast_function("cholesky_ex")
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``(L, info)``: :func:`cholesky` that reports failures in ``info`` (int32 per matrix: the
    order of the first leading minor that is not positive-definite, else 0) instead of raising."""
    L, info = _cholesky("linalg.cholesky", A, upper)
    if check_errors and info.any():
        _raise_cholesky("linalg.cholesky", info, A._data.shape)
    info = Tensor._make(info, A._device)
    if out is not None:
        write_out(L, out[0])
        write_out(info, out[1])
        return linalg_cholesky_ex(*out)
    return linalg_cholesky_ex(L, info)


# ---------------------------------------------------------------- QR
class LinalgQrBackward0(MultiOutputNode):
    """``A = Q R`` (Householder, as LAPACK: a real diagonal of ``R`` for complex ``A`` too). For
    ``m >= n`` with ``M = R gR^H - gQ^H Q`` and ``sym(M)`` the Hermitian matrix with ``M``'s strict
    lower triangle and the real part of its diagonal: ``gA = (gQ + Q sym(M)) R^-H``. For ``m < n``,
    ``A = [X | Y]`` with ``X = Q R_X`` square and ``R_Y = Q^H Y``. (``^H`` is ``^T`` for real ``A``.)"""

    supports_complex = True

    def forward(ctx, a, mode):
        xp = xp_of(a)
        if mode == "r":
            r = xp.linalg.qr(a._data, mode="r")
            q = xp.empty((0,), dtype=a._data.dtype)
        else:
            q, r = xp.linalg.qr(a._data, mode=mode)
        ctx.mode, ctx.n = mode, r.shape[-1]
        return q, r

    def backward(ctx, gq, gr):
        n = ctx.n
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                               "linalg.qr.")
        q, r = ctx.outputs()
        m = q._data.shape[-2]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        if m >= n:
            return _qr_tall_grad(q, r, gq, gr)
        from .shape import cat
        gr_x, gr_y = gr[..., :, :m], gr[..., :, m:]
        y = q @ r[..., :, m:]      # the columns of A right of the square part
        g_x = _qr_tall_grad(q, r[..., :, :m], gq + y @ mH(gr_y), gr_x)
        return cat([g_x, q @ gr_y], -1)


def _qr_tall_grad(q, r, gq, gr):
    """The QR gradient for ``Q`` (m, n), ``R`` (n, n), ``m >= n``."""
    m = r @ mH(gr) - mH(gq) @ q
    low = m.tril(-1)
    diagonal = m.diagonal(0, -2, -1)
    sym = low + mH(low) + (diagonal.real if m._dtype.is_complex else diagonal).diag_embed()
    b = gq + q @ sym
    if r._dtype.is_complex:      # R^-H b^H by a general solve (the triangular one takes real matrices)
        return mH(solve(r, mH(b)))
    return mT(solve_triangular(r, mT(b), upper=True))


@autocast_function("qr")
def qr(A, mode="reduced", *, out=None):
    """``(Q, R)`` with ``A = Q R`` for ``A`` (..., m, n): ``Q`` with orthonormal columns and ``R``
    upper triangular; ``mode`` 'reduced' (k = min(m, n) columns of ``Q``), 'complete' (``Q``
    square) or 'r' (``R`` only; ``Q`` empty)."""
    _check_matrix("linalg.qr", A, "geqrf_cpu")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           f"or 'complete'")
    q, r = keep_outputs(apply(LinalgQrBackward0, A, mode))
    if out is not None:
        write_out(q, out[0])
        write_out(r, out[1])
        return linalg_qr(*out)
    return linalg_qr(q, r)


# ---------------------------------------------------------------- symmetric eigendecomposition
class LinalgEighBackward0(MultiOutputNode):
    """``A = V diag(L) V^H`` (``L`` real). ``gA = V (diag(gL) + skew(V^H gV) / E) V^H`` with
    ``E_ij = L_j - L_i`` and ``skew(X) = (X - X^H) / 2``; the second term is left out when
    ``gV`` is zero (only the eigenvalues used), so repeated eigenvalues give finite gradients
    then, NaN otherwise (as PyTorch). Complex eigenvectors: a loss that depends on their phases
    (an imaginary diagonal of ``V^H gV``) is refused, as PyTorch refuses it."""

    supports_complex = True

    def forward(ctx, a, uplo, vectors):
        xp = xp_of(a)
        try:
            w, v = xp.linalg.eigh(a._data, UPLO=uplo)
        except xp.linalg.LinAlgError:
            raise LinAlgError("linalg.eigh: The algorithm failed to converge because the input matrix is "
                              "ill-conditioned or has too many repeated eigenvalues.") from None
        return (w, v) if vectors else w

    def backward(ctx, gw, gv=None):
        w, v = ctx.outputs()
        inner = gw.diag_embed()
        if v._dtype.is_complex:
            inner = inner.to(v.dtype)
        if gv is not None and not _is_zero(gv):
            vg = mH(v) @ gv
            if vg._dtype.is_complex:
                _require_phase_free(vg.diagonal(0, -2, -1).imag, _PHASE_DEPENDENT_EIGH, atol=_EIGH_PHASE_ATOL)
            e = w.unsqueeze(-2) - w.unsqueeze(-1)
            off = (vg - mH(vg)) * 0.5 / (e + e.diagonal(0, -2, -1).add(1).diag_embed())
            inner = inner + off - off.diagonal(0, -2, -1).diag_embed()
        return v @ inner @ mH(v)


def _check_eigh(name, A, uplo):
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A._dtype._category not in (2, 3):
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{SCALAR_NAME[A._dtype]}'")
    _check_matrix(name, A, "linalg_eigh_cpu")
    _check_square(name, A)
    if not isinstance(uplo, str) or uplo.upper() not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    return uplo.upper()


@autocast_function("eigh")
def eigh(A, UPLO="L", *, out=None):  # noqa: N803 - PyTorch's argument name
    """``(eigenvalues, eigenvectors)`` of symmetric ``A`` (..., n, n), eigenvalues ascending; only
    the lower (``UPLO='L'``) or upper triangle is read."""
    uplo = _check_eigh("linalg.eigh", A, UPLO)
    w, v = keep_outputs(apply(LinalgEighBackward0, A, uplo, True))
    if out is not None:
        write_out(w, out[0])
        write_out(v, out[1])
        return linalg_eigh(*out)
    return linalg_eigh(w, v)


@autocast_function("eigvalsh")
def eigvalsh(A, UPLO="L", *, out=None):  # noqa: N803
    """The eigenvalues of symmetric ``A`` (..., n, n), ascending."""
    uplo = _check_eigh("linalg.eigh", A, UPLO)
    if _recording(A):    # the gradient needs the eigenvectors: keep them in the graph
        return write_out(eigh(A, uplo).eigenvalues, out)
    return write_out(apply(LinalgEighBackward0, A, uplo, False), out)


# ---------------------------------------------------------------- singular value decomposition
def svd_arrays(xp, x, full_matrices):
    """``xp.linalg.svd`` with PyTorch's handling of non-finite input: NaN raises
    :class:`LinAlgError`, infinities give NaN factors (for the matrices of a batch that hold them)."""
    if not bool(xp.isfinite(x).all()):
        if bool(xp.isnan(x).any()):
            raise LinAlgError("linalg.svd: The algorithm failed to converge because the input matrix contained "
                              "non-finite values.")
        finite = xp.isfinite(x).all(axis=(-2, -1))
        if x.ndim > 2 and bool(finite.any()):     # the finite matrices of a batch still get their factors
            u, s, vh = xp.linalg.svd(xp.where(finite[..., None, None], x, 0), full_matrices=full_matrices)
            u[~finite], s[~finite], vh[~finite] = float("nan"), float("nan"), float("nan")
            return u, s, vh
        m, n = x.shape[-2:]
        k = min(m, n)
        rows, cols = (m, n) if full_matrices else (k, k)
        nan = float("nan")
        real = x.real.dtype      # singular values are real for complex matrices too
        return (xp.full(x.shape[:-2] + (m, rows), nan, dtype=x.dtype), xp.full(x.shape[:-2] + (k,), nan, dtype=real),
                xp.full(x.shape[:-2] + (cols, n), nan, dtype=x.dtype))
    return xp.linalg.svd(x, full_matrices=full_matrices)


class LinalgSvdBackward0(MultiOutputNode):
    """``A = U diag(S) Vh`` (``S`` real); gradients for the first ``k = min(m, n)`` columns of ``U``
    and rows of ``Vh`` (the rest of full matrices are ignored, as in PyTorch). With ``J = U^H gU``,
    ``K = V^H gV``, ``E_ij = S_j^2 - S_i^2`` and ``skew(X) = X - X^H`` (``^H`` is ``^T`` for real A):
    ``gA = U [diag(gS) + (skew(J) S + S skew(K)) / E + i diag(Im J - Im K) / (2 S)] Vh
    + (I - U U^H) gU S^-1 Vh + U S^-1 gVh (I - V V^H)``, the ``U``/``V`` terms left out when ``gU``,
    ``gVh`` are zero. The imaginary diagonal term exists for complex ``A`` only, and a loss that
    depends on the vectors' phases (``Im J + Im K`` not ~0 on the diagonal) is refused, as in PyTorch."""

    supports_complex = True

    def forward(ctx, a, full_matrices, vectors):
        u, s, vh = svd_arrays(xp_of(a), a._data, full_matrices)
        return (u, s, vh) if vectors else s

    def backward(ctx, *grads):
        gs = grads[0] if len(grads) == 1 else grads[1]
        u, s, vh = ctx.outputs()
        k = s._data.shape[-1]
        u, vh = u[..., :, :k], vh[..., :k, :]
        complex_ = u._dtype.is_complex
        inner = gs.diag_embed()
        if complex_:
            inner = inner.to(u.dtype)
        gu = gvh = None
        if len(grads) == 3:
            gu, gvh = grads[0][..., :, :k], grads[2][..., :k, :]
            gu = None if _is_zero(gu) else gu
            gvh = None if _is_zero(gvh) else gvh
        if gu is None and gvh is None:
            return u @ inner @ vh
        s2 = s * s
        e = s2.unsqueeze(-2) - s2.unsqueeze(-1)
        e = e + e.diagonal(0, -2, -1).add(1).diag_embed()
        v = mH(vh)
        result_extra = phase_sum = phase_diff = None
        if gu is not None:
            j = mH(u) @ gu
            if complex_:
                phase_sum = phase_diff = j.diagonal(0, -2, -1).imag
            j = (j - mH(j)) * s.unsqueeze(-2)
            inner = inner + (j - j.diagonal(0, -2, -1).diag_embed()) / e
            if u._data.shape[-2] > k:
                result_extra = (gu - u @ (mH(u) @ gu)) / s.unsqueeze(-2) @ vh
        if gvh is not None:
            gv = mH(gvh)
            kk = mH(v) @ gv
            if complex_:
                im = kk.diagonal(0, -2, -1).imag
                phase_sum = im if phase_sum is None else phase_sum + im
                phase_diff = -im if phase_diff is None else phase_diff - im
            kk = s.unsqueeze(-1) * (kk - mH(kk))
            inner = inner + (kk - kk.diagonal(0, -2, -1).diag_embed()) / e
            if vh._data.shape[-1] > k:
                extra = u @ (mH(gv - v @ (mH(v) @ gv)) / s.unsqueeze(-1))
                result_extra = extra if result_extra is None else result_extra + extra
        if complex_:
            _require_phase_free(phase_sum, _PHASE_DEPENDENT_SVD)
            inner = inner + (phase_diff / (2 * s) * 1j).diag_embed()
        result = u @ inner @ vh
        return result if result_extra is None else result + result_extra


@autocast_function("svd")
def svd(A, full_matrices=True, *, driver=None, out=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh`` for ``A`` (..., m, n): singular values ``S``
    descending; ``U`` (m, m) and ``Vh`` (n, n), or (m, k) and (k, n) with ``k = min(m, n)`` when
    not ``full_matrices``. ``driver`` is a cuSOLVER choice PyTorch only accepts on CUDA."""
    _check_matrix("linalg.svd", A, "linalg_svd_cpu")
    _check_driver(driver, A)
    u, s, vh = keep_outputs(apply(LinalgSvdBackward0, A, bool(full_matrices), True))
    if out is not None:
        for src, dst in zip((u, s, vh), out):
            write_out(src, dst)
        return linalg_svd(*out)
    return linalg_svd(u, s, vh)


def _check_driver(driver, A):
    if driver is not None and A._device.type != "cuda":
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


@autocast_function("svdvals")
def svdvals(A, *, driver=None, out=None):
    """The singular values of ``A`` (..., m, n), descending (k = min(m, n) of them)."""
    _check_matrix("linalg.svd", A, "linalg_svd_cpu")
    _check_driver(driver, A)
    if _recording(A):    # the gradient needs the singular vectors: keep them in the graph
        return write_out(svd(A, False).S, out)
    return write_out(apply(LinalgSvdBackward0, A, False, False), out)

