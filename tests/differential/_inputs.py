"""Random, reproducible inputs written as Python source.

Every input of a differential case is a *source expression* that builds it
with a library bound to the name ``T`` on a device bound to ``dev``, e.g.
``T.tensor([[1.5, nan]], dtype=T.float32, device=dev, requires_grad=True)``.
The same text is evaluated once with ``T = torch`` and once with
``T = gputorch``, so both libraries see exactly the same values and a failing
case can be printed as a one-line repro.

:class:`CaseBuilder` draws shapes, dtypes, values (with NaN, inf, huge and
tiny values), memory layouts (transposed, stepped, expanded, permuted) and
the small integers ops take (dims, sizes), and collects the leaf tensors.
"""
import math

import numpy as np

ALL_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("uint8", "int8", "int16", "int32", "int64")
# Drawn only where a generator asks for them (the complex cases of ``_specs_complex``).
COMPLEX_DTYPES = ("complex64", "complex128")

# How often each dtype is drawn: float32 most, every other one regularly.
_DTYPE_WEIGHTS = {"bool": 0.07, "uint8": 0.06, "int8": 0.05, "int16": 0.04, "int32": 0.06,
                  "int64": 0.14, "float16": 0.09, "float32": 0.35, "float64": 0.14,
                  "complex64": 0.5, "complex128": 0.5}

# Special floating values per dtype: huge (near overflow) and tiny (subnormal-ish).
_HUGE = {"float16": 6.0e4, "float32": 3.0e38, "float64": 1.0e300, "complex64": 3.0e38, "complex128": 1.0e300}
_TINY = {"float16": 1.0e-7, "float32": 1.0e-40, "float64": 1.0e-310, "complex64": 1.0e-40,
         "complex128": 1.0e-310}

# Above this many elements a tensor is written as a seeded NumPy draw, not a literal.
_LITERAL_LIMIT = 40


def _literal(value):
    """Python source for one element (``nan``/``inf`` are names in the eval namespace)."""
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, complex):
        return f"complex({_literal(value.real)}, {_literal(value.imag)})"
    return repr(int(value))


def nested_source(values):
    """Source of a nested list (or scalar) from ``ndarray.tolist()`` output."""
    if isinstance(values, list):
        return "[" + ", ".join(nested_source(v) for v in values) + "]"
    return _literal(values)


class CaseBuilder:
    """Draws the inputs of one case from a seeded generator and records the leaves.

    ``leaves`` holds the source of each leaf (evaluated with ``T`` and ``dev``);
    the expressions returned by :meth:`tensor` name them ``a0, a1, ...`` with
    any view (``.transpose``, slicing, ``.expand``, ``.permute``) applied.
    """

    def __init__(self, rng, *, grad=True, specials=True):
        self.rng = rng
        self.leaves = []
        self.shapes = {}          # expression -> logical shape, for dim/size draws
        self.dtypes = {}          # expression -> dtype name
        self.grad = grad          # whether float leaves may require grad
        self.specials = specials  # whether NaN/inf/huge/tiny values may appear
        self.float_bias = 0.0     # extra chance of drawing a floating dtype

    # ----------------------------------------------------------------- draws
    def chance(self, p):
        return bool(self.rng.random() < p)

    def choice(self, options):
        return options[int(self.rng.integers(len(options)))]

    def dtype(self, pool=ALL_DTYPES):
        floats = tuple(d for d in pool if d in FLOAT_DTYPES)
        if floats and self.float_bias and self.chance(self.float_bias):
            pool = floats
        weights = np.array([_DTYPE_WEIGHTS[d] for d in pool])
        return pool[int(self.rng.choice(len(pool), p=weights / weights.sum()))]

    def shape(self, min_ndim=0, max_ndim=5, max_numel=72):
        """A shape: 0-d to 5-d, sizes mostly 1-4, sometimes an empty dimension."""
        ndims = [n for n in range(min_ndim, max_ndim + 1)]
        weights = np.array([{0: 0.10, 1: 0.25, 2: 0.30, 3: 0.20, 4: 0.10, 5: 0.05}.get(n, 0.05)
                            for n in ndims])
        ndim = ndims[int(self.rng.choice(len(ndims), p=weights / weights.sum()))]
        while True:
            sizes = [int(self.rng.choice([0, 1, 1, 2, 2, 3, 3, 4])) if self.chance(0.9) else 5
                     for _ in range(ndim)]
            if 0 in sizes and not self.chance(0.35):   # keep empty tensors at a few percent
                continue
            if int(np.prod(sizes)) <= max_numel:
                return tuple(sizes)

    def broadcast_partner(self, shape):
        """A shape that broadcasts with ``shape`` (rarely one that does not)."""
        if self.chance(0.05) and shape:
            bad = list(shape)
            i = int(self.rng.integers(len(bad)))
            bad[i] = bad[i] + 2
            return tuple(bad)
        partner = list(shape)
        if partner and self.chance(0.3):
            partner = partner[int(self.rng.integers(len(partner) + 1)):]
        partner = [1 if (s and self.chance(0.25)) else s for s in partner]
        if self.chance(0.15) and len(partner) < 5:
            partner = [int(self.rng.integers(1, 3))] + partner
        return tuple(partner)

    def values(self, shape, dtype):
        """A NumPy array (complex128/float64/int64/bool) of values for a tensor of ``dtype``."""
        rng = self.rng
        if dtype in COMPLEX_DTYPES:   # real and imaginary parts drawn as the float of that width
            part = "float32" if dtype == "complex64" else "float64"
            values = np.empty(shape, np.complex128)   # parts set apart: inf * 1j would make a NaN
            values.real, values.imag = self.values(shape, part), self.values(shape, part)
            return values
        if dtype == "bool":
            return rng.random(shape) < 0.5
        if dtype in INT_DTYPES:
            info = np.iinfo(dtype)
            low, high = max(int(info.min), -9), min(int(info.max), 9)
            vals = rng.integers(low, high + 1, size=shape, dtype=np.int64)
            if self.specials and vals.size and self.chance(0.1):
                flat = vals.reshape(-1)
                flat[int(rng.integers(flat.size))] = self.choice([int(info.min), int(info.max), 0])
            return vals
        if self.specials and self.chance(0.06):
            # Large same-sign values: sums and squares overflow unless accumulated wider.
            return np.round(rng.uniform(0.5, 1.0, shape), 2) * (_HUGE[dtype] / 8)
        vals = np.round(rng.standard_normal(shape) * self.choice([1.0, 1.0, 3.0, 0.3]), 2)
        if self.specials and vals.size and self.chance(0.25):
            flat = vals.reshape(-1)
            for _ in range(int(rng.integers(1, 3))):
                special = self.choice([math.nan, math.inf, -math.inf, _HUGE[dtype], -_HUGE[dtype],
                                       _TINY[dtype], 0.0, -0.0])
                flat[int(rng.integers(flat.size))] = special
        return vals

    def int_in(self, low, high):
        return int(self.rng.integers(low, high + 1))

    def dim(self, ndim, *, allow_bad=True):
        """A dim index for an ``ndim``-d tensor (negative sometimes; rarely out of range)."""
        span = max(ndim, 1)
        if allow_bad and self.chance(0.05):
            return self.choice([span, -span - 1])
        return self.int_in(-span, span - 1)

    def dims(self, ndim):
        """A tuple of distinct dims (possibly empty) for multi-dim reductions."""
        k = self.int_in(0, max(ndim, 1))
        picked = sorted(self.rng.permutation(max(ndim, 1))[:k].tolist())
        return tuple(d - ndim if (ndim and self.chance(0.3)) else d for d in picked)

    def python_scalar(self, kinds=("int", "float", "bool")):
        kind = self.choice(kinds)
        if kind == "bool":
            return self.choice(["True", "False"])
        if kind == "int":
            return str(self.choice([0, 1, 2, 3, -1, -2, 5]))
        return self.choice(["0.5", "-1.5", "2.0", "0.0", "nan", "inf", "-inf", "1e-30", "3.25",
                            "1e30"] if self.specials else ["0.5", "-1.5", "2.0", "3.25"])

    # --------------------------------------------------------------- tensors
    def tensor(self, shape=None, dtype=None, *, pool=ALL_DTYPES, grad=None, layout=None,
               values=None, min_ndim=0, max_ndim=5):
        """Add a leaf and return the expression of the (possibly non-contiguous) input."""
        shape = self.shape(min_ndim, max_ndim) if shape is None else tuple(shape)
        dtype = self.dtype(pool) if dtype is None else dtype
        if grad is None:
            grad = self.grad and (dtype in FLOAT_DTYPES or dtype in COMPLEX_DTYPES) and self.chance(0.7)
        if layout is None:  # given values are laid out for the logical shape
            layout = self._layout(shape) if values is None else "contiguous"
        base_shape, view = self._view(shape, layout)
        if values is None:
            arr = self.values(base_shape, dtype)
        else:
            arr = np.asarray(values).reshape(base_shape)
        name = f"a{len(self.leaves)}"
        self.leaves.append(self._leaf_source(arr, dtype, grad))
        expr = name + view
        self.shapes[expr] = shape
        self.dtypes[expr] = dtype
        return expr

    def index_tensor(self, high, shape, *, dtype="int64", allow_negative=True):
        """An integer tensor of indices in ``[-high, high)`` (or ``[0, high)``)."""
        low = -high if (allow_negative and high) else 0
        vals = self.rng.integers(low, max(high, 1), size=shape) if high else np.zeros(shape, np.int64)
        return self.tensor(shape, dtype, grad=False, layout="contiguous", values=vals)

    def _layout(self, shape):
        options = ["contiguous"] * 5
        if len(shape) >= 2:
            options += ["transpose", "permute"]
        if len(shape) >= 1:
            options += ["step", "step_last"]
            if any(s > 1 for s in shape):
                options += ["expand"]
        return self.choice(options)

    def _view(self, shape, layout):
        """The leaf's shape and the view source giving ``shape`` with that layout."""
        if layout == "transpose":
            base = shape[:-2] + (shape[-1], shape[-2])
            return base, ".transpose(-1, -2)"
        if layout == "permute":
            perm = self.rng.permutation(len(shape)).tolist()
            base = tuple(shape[p] for p in perm)
            inverse = [perm.index(i) for i in range(len(shape))]
            return base, f".permute({', '.join(map(str, inverse))})"
        if layout == "step":
            return (shape[0] * 2,) + shape[1:], "[::2]"
        if layout == "step_last":
            return shape[:-1] + (shape[-1] * 2,), "[..., ::2]"
        if layout == "expand":
            base = tuple(1 if (s > 1 and self.chance(0.6)) else s for s in shape)
            if base == shape:
                base = tuple(1 if s > 1 else s for s in shape)
            return base, f".expand({', '.join(map(str, shape))})"
        return shape, ""

    def _leaf_source(self, arr, dtype, grad):
        tail = f"dtype=T.{dtype}, device=dev" + (", requires_grad=True" if grad else "")
        shape = arr.shape
        if 0 in shape:
            return f"T.zeros({tuple(shape)}, {tail})"
        if arr.size > _LITERAL_LIMIT:
            seed = int(self.rng.integers(1 << 30))
            if dtype == "bool":
                draw = f"np.random.default_rng({seed}).random({tuple(shape)}) < 0.5"
            elif dtype in INT_DTYPES:
                low = 0 if dtype == "uint8" else -9
                draw = f"np.random.default_rng({seed}).integers({low}, 10, {tuple(shape)})"
            elif dtype in COMPLEX_DTYPES:
                draw = f"np.random.default_rng({seed}).standard_normal({tuple(shape) + (2,)}).round(2) @ [1, 1j]"
            else:
                draw = f"np.random.default_rng({seed}).standard_normal({tuple(shape)}).round(2)"
            return f"T.tensor({draw}, {tail})"
        return f"T.tensor({nested_source(arr.tolist())}, {tail})"
