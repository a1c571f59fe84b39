"""Run one differential case on torch and on gputorch, and compare the outcomes.

A :class:`Case` is pure source text: the leaves (``a0, a1, ...``) and a body
expression over them, evaluated with ``T`` bound to a library and ``dev`` to a
device. Running it gives an :class:`Outcome`: the raised exception, or the
result and the leaves after the call turned into plain, library-free values
(NumPy arrays, tuples, Python scalars), plus the gradients of every floating
leaf after ``backward`` of a seeded random weighted sum of the outputs.
:func:`compare` lists the differences between two outcomes.
"""
import math
import re
import warnings
from dataclasses import dataclass, field

import numpy as np

# The exception families a case may raise: both libraries must raise the same one.
_FAMILIES = (IndexError, TypeError, ValueError, NotImplementedError, RuntimeError,
             ZeroDivisionError, OverflowError, KeyError, AttributeError, AssertionError)

_GRAD_LOOSENESS = 10.0

_TOLERANCES = {  # dtype name -> (rtol, atol)
    "float16": (1e-2, 1e-3),
    "bfloat16": (1e-2, 1e-2),     # 8 bits of mantissa; compared as float32 values
    "float32": (1e-5, 1e-5),
    "float64": (1e-10, 1e-10),
}
_TOLERANCES.update({"complex64": _TOLERANCES["float32"], "complex128": _TOLERANCES["float64"]})


@dataclass
class Case:
    """One call: leaf sources, a body over ``a0..aN``, and how to compare it."""
    op: str
    index: int
    leaves: list
    body: str
    random: bool = False   # a random op: compare only types, dtypes and shapes
    grad: bool = True      # whether to compare gradients
    _code: dict = field(default_factory=dict, repr=False)

    def names(self):
        return ", ".join(f"a{i}" for i in range(len(self.leaves)))

    def call_source(self):
        """``(lambda a0, a1: BODY)(LEAF0, LEAF1)``: the case as one expression."""
        return f"(lambda {self.names()}: {self.body})({', '.join(self.leaves)})"

    def compiled(self):
        """Compiled leaf and body code, cached on the case (both libraries reuse it)."""
        if not self._code:
            self._code["leaves"] = [compile(src, f"<a{i}>", "eval") for i, src in enumerate(self.leaves)]
            self._code["body"] = compile(f"lambda {self.names()}: {self.body}", "<body>", "eval")
        return self._code["leaves"], self._code["body"]

    def repro(self, device, with_grad=False, tensor_output=True):
        """A one-line shell command that runs the case on both libraries."""
        call = self.call_source()
        if with_grad:
            loss = (f"({self.body}).sum()" if tensor_output else
                    f"sum(o.sum() for o in ({self.body}) if isinstance(o, T.Tensor) and o.requires_grad)")
            grads = (f"[a.grad if isinstance(a, T.Tensor) else [p.grad for _, p in sorted(a.named_parameters())]"
                     f" for a in ({self.names()},)]")
            call = f"(lambda {self.names()}: ({loss}.backward(), {grads})[1])({', '.join(self.leaves)})"
        return ('python -c "import numpy as np, torch, gputorch; from math import nan, inf; '
                f"f = lambda T, dev: {call}; print(f(torch, 'cpu')); print(f(gputorch, '{device}'))\"")


@dataclass
class Outcome:
    """What one library did with a case (all values already library-free)."""
    error: BaseException = None
    value: object = None
    leaves_after: list = None
    backward_error: BaseException = None
    grads: list = None
    tensor_output: bool = True


class CaseGeneratorError(Exception):
    """The case's own inputs could not be built with torch: a bug in the generator."""


def execute(case, lib, device, weight_seed):
    """Run ``case`` with library ``lib`` on ``device`` and return its :class:`Outcome`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _execute(case, lib, device, weight_seed)


def _execute(case, lib, device, weight_seed):
    leaf_code, body_code = case.compiled()
    namespace = {"T": lib, "dev": device, "np": np, "nan": math.nan, "inf": math.inf}
    try:
        leaves = [eval(code, namespace) for code in leaf_code]  # noqa: S307 - our own source
    except Exception as exc:  # noqa: BLE001
        if lib.__name__ == "torch":
            raise CaseGeneratorError(f"torch could not build the inputs: {exc!r}") from exc
        return Outcome(error=exc)
    body = eval(body_code, namespace)  # noqa: S307
    try:
        result = body(*leaves)
        value = to_plain(result, lib, case.random)
    except Exception as exc:  # noqa: BLE001
        return Outcome(error=exc)
    outcome = Outcome(value=value, tensor_output=isinstance(result, lib.Tensor))
    outcome.leaves_after = [_state_after(leaf, lib, case.random) for leaf in leaves]
    if case.grad and not case.random:
        _backward(outcome, result, leaves, lib, device, weight_seed)
    return outcome


def _state_after(leaf, lib, structure_only):
    """A leaf after the call: a tensor's values, a module's buffers (running stats)."""
    if isinstance(leaf, lib.nn.Module):
        return ("buffers", [to_plain(buf, lib, structure_only) for _, buf in sorted(leaf.named_buffers())
                            if buf is not None])
    return to_plain(leaf, lib, structure_only)


def _float_outputs(result, lib):
    """The floating tensors in ``result`` (nested tuples/lists) that require grad."""
    if isinstance(result, lib.Tensor):
        floating = result.dtype.is_floating_point or result.dtype.is_complex
        return [result] if result.requires_grad and floating else []
    if isinstance(result, (tuple, list)):
        return [t for item in result for t in _float_outputs(item, lib)]
    return []


def _grad_leaves(leaves, lib):
    """Every floating leaf that requires grad: tensor leaves and module parameters."""
    found = []
    for leaf in leaves:
        if isinstance(leaf, lib.Tensor):
            found.append(leaf if leaf.requires_grad else None)
        elif isinstance(leaf, lib.nn.Module):
            found.extend(p for _, p in sorted(leaf.named_parameters()))
    return found


def _backward(outcome, result, leaves, lib, device, weight_seed):
    outputs = _float_outputs(result, lib)
    if not outputs:
        return
    try:
        loss = None
        for k, out in enumerate(outputs):
            if out.is_sparse:
                out = out.to_dense()
            if out.dtype.is_complex:   # a real loss: weights on the real and imaginary parts
                out = lib.view_as_real(out.resolve_conj())
            weights = np.random.default_rng(weight_seed + k).standard_normal(tuple(out.shape)).round(2)
            term = (out * lib.tensor(weights, dtype=out.dtype, device=out.device)).sum()
            loss = term if loss is None else loss + term
        loss.backward()
        outcome.grads = [None if leaf is None else to_plain(leaf.grad, lib, False)
                         for leaf in _grad_leaves(leaves, lib)]
    except Exception as exc:  # noqa: BLE001
        outcome.backward_error = exc


def to_plain(x, lib, structure_only):
    """A library-free description of ``x`` that :func:`compare_plain` understands."""
    if isinstance(x, lib.Tensor):
        if x.is_sparse:   # sparse results: compared as their dense values
            x = x.detach().to_dense()
        array = None if structure_only else _numpy(x, lib)
        return ("tensor", str(x.dtype).split(".")[-1], tuple(x.shape), bool(x.requires_grad), array)
    if isinstance(x, lib.Size):
        return ("Size", tuple(int(s) for s in x))
    if isinstance(x, lib.dtype):
        return ("dtype", str(x).split(".")[-1])
    if isinstance(x, (tuple, list)):
        kind = type(x).__name__ if hasattr(x, "_fields") or type(x).__module__.endswith("return_types") else (
            "tuple" if isinstance(x, tuple) else "list")
        return (kind, [to_plain(item, lib, structure_only) for item in x])
    if x is None or isinstance(x, (bool, int, float, str)):
        if isinstance(x, float) and not structure_only:
            return ("float", x)
        return (type(x).__name__, None if structure_only else x)
    return ("object", type(x).__name__)


def _numpy(tensor, lib):
    """The values as a NumPy array (torch's lazily-zero gradients need ``force=True``); bfloat16
    values as float32 (torch has no NumPy bfloat16; both convert exactly)."""
    plain = tensor.detach().cpu()
    if str(plain.dtype).endswith("bfloat16"):
        plain = plain.float()
    if lib.__name__ == "torch":
        return np.asarray(plain.numpy(force=True))
    return np.asarray(plain.numpy())


def family(exc):
    """The exception family (IndexError, TypeError, ...) an exception belongs to."""
    for cls in _FAMILIES:
        if isinstance(exc, cls):
            return cls.__name__
    return type(exc).__name__


def _short(exc):
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}({text[:120]!r})"


# Normalisations divide by sqrt(var + eps): a rounding difference in the mean of a nearly constant
# input (PyTorch's accumulation order against NumPy's) reaches the output multiplied by up to
# 1/sqrt(eps) (316 for eps=1e-5). Their tolerances are scaled by this factor (still far below
# what a wrong formula gives).
NORMALISATION = re.compile(r"^(F\.(batch|instance|group|layer|rms)_norm|"
                           r"nn\.(Lazy)?(BatchNorm|InstanceNorm|GroupNorm|LayerNorm|RMSNorm)\w*)$")
NORMALISATION_LOOSENESS = 30.0


def looseness_for(group):
    """The tolerance factor of an op group (1 but for normalisations)."""
    return NORMALISATION_LOOSENESS if NORMALISATION.match(group) else 1.0


def compare(ref, got, looseness=1.0):
    """Differences between torch's outcome ``ref`` and gputorch's ``got`` (list of str);
    ``looseness`` multiplies every floating tolerance."""
    if ref.error is not None or got.error is not None:
        if ref.error is None:
            return [f"gputorch raised {_short(got.error)}, torch succeeded"]
        if got.error is None:
            return [f"torch raised {_short(ref.error)}, gputorch succeeded"]
        if family(ref.error) != family(got.error):
            return [f"error family: torch {_short(ref.error)} vs gputorch {_short(got.error)}"]
        return []
    problems = compare_plain(ref.value, got.value, "out", looseness)
    for i, (r, g) in enumerate(zip(ref.leaves_after or [], got.leaves_after or [])):
        problems += compare_plain(r, g, f"input {i} after the call", looseness)
    if ref.backward_error is not None or got.backward_error is not None:
        if ref.backward_error is None:
            problems.append(f"backward: gputorch raised {_short(got.backward_error)}, torch succeeded")
        elif got.backward_error is None:
            problems.append(f"backward: torch raised {_short(ref.backward_error)}, gputorch succeeded")
    elif ref.grads is not None or got.grads is not None:
        if ref.grads is None or got.grads is None or len(ref.grads) != len(got.grads):
            problems.append("backward: different sets of gradients")
        else:
            for i, (r, g) in enumerate(zip(ref.grads, got.grads)):
                problems += compare_plain(r, g, f"grad of leaf {i}", _GRAD_LOOSENESS * looseness)
    return problems


def compare_plain(ref, got, where, looseness=1.0):
    """Differences between two :func:`to_plain` descriptions.

    ``looseness`` multiplies the floating tolerances (gradients use
    :data:`_GRAD_LOOSENESS`: backward passes accumulate more rounding).
    """
    if ref is None or got is None:
        return [] if ref is got else [f"{where}: torch {ref is None and 'None' or 'value'} "
                                      f"vs gputorch {got is None and 'None' or 'value'}"]
    if ref[0] != got[0]:
        return [f"{where}: type {ref[0]} (torch) vs {got[0]} (gputorch)"]
    kind = ref[0]
    if kind == "tensor":
        return _compare_tensors(ref, got, where, looseness)
    if kind in ("Size", "dtype", "object", "str", "NoneType"):
        return [] if ref[1:] == got[1:] else [f"{where}: {ref[1:]} (torch) vs {got[1:]} (gputorch)"]
    if kind in ("bool", "int"):
        return [] if ref[1] == got[1] else [f"{where}: {ref[1]!r} (torch) vs {got[1]!r} (gputorch)"]
    if kind == "float":
        r, g = ref[1], got[1]
        if (math.isnan(r) and math.isnan(g)) or r == g or (
                math.isfinite(r) and math.isfinite(g) and math.isclose(r, g, rel_tol=1e-5, abs_tol=1e-6)):
            return []
        return [f"{where}: {r!r} (torch) vs {g!r} (gputorch)"]
    # sequences: tuple, list, named return types
    if len(ref[1]) != len(got[1]):
        return [f"{where}: {kind} of length {len(ref[1])} (torch) vs {len(got[1])} (gputorch)"]
    problems = []
    for i, (r, g) in enumerate(zip(ref[1], got[1])):
        problems += compare_plain(r, g, f"{where}[{i}]", looseness)
    return problems


def _compare_tensors(ref, got, where, looseness):
    _, r_dtype, r_shape, r_grad, r_arr = ref
    _, g_dtype, g_shape, g_grad, g_arr = got
    if r_dtype != g_dtype:
        return [f"{where}: dtype {r_dtype} (torch) vs {g_dtype} (gputorch)"]
    if r_shape != g_shape:
        return [f"{where}: shape {r_shape} (torch) vs {g_shape} (gputorch)"]
    problems = []
    if r_grad != g_grad:
        problems.append(f"{where}: requires_grad {r_grad} (torch) vs {g_grad} (gputorch)")
    if r_arr is None or g_arr is None:
        return problems
    if g_arr.shape != r_arr.shape:
        return problems + [f"{where}: numpy() shape {g_arr.shape} vs {r_arr.shape}"]
    bad = _mismatched(r_arr, g_arr, r_dtype, looseness)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
        problems.append(f"{where}: values differ at {int(bad.sum())}/{bad.size} elements, e.g. at {idx}: "
                        f"torch {r_arr[idx]!r} vs gputorch {g_arr[idx]!r}")
    return problems


def _mismatched(expected, actual, dtype, looseness=1.0):
    """Boolean mask of the elements that disagree (NaN/inf positions, then tolerance).

    A finite element agrees when ``|a - e| <= atol * scale + rtol * |e|``, where
    ``scale`` is the largest finite magnitude in the expected tensor (at least 1):
    an error small next to the tensor's largest values is rounding, not a bug.
    """
    if dtype not in _TOLERANCES:
        return np.asarray(expected != actual)
    if expected.dtype.kind == "c":   # complex: an element disagrees when either part does
        parts = [_mismatched(np.asarray(part(expected)), np.asarray(part(actual)), dtype, looseness)
                 for part in (np.real, np.imag)]
        return parts[0] | parts[1]
    e, a = expected.astype(np.float64), actual.astype(np.float64)
    e_nan, a_nan = np.isnan(e), np.isnan(a)
    finite = np.isfinite(e) & np.isfinite(a)
    rtol, atol = (t * looseness for t in _TOLERANCES[dtype])
    expected_finite = e[np.isfinite(e)]
    scale = max(1.0, float(np.abs(expected_finite).max())) if expected_finite.size else 1.0
    close = np.zeros(e.shape, dtype=bool)
    close[finite] = np.abs(e[finite] - a[finite]) <= atol * scale + rtol * np.abs(e[finite])
    same_special = (e_nan & a_nan) | (~e_nan & ~a_nan & ~finite & (e == a))
    return ~(close | same_special)
