"""``gradcheck`` and ``gradgradcheck``: compare autograd with central finite differences.

Inputs should be float64 (or complex128) tensors. Each input that requires grad is perturbed element
by element, in place on its own device (any strides work, including transposed or
sliced views; inputs with zero strides, as made by ``expand``, are rejected because
one perturbation would move several elements), and the numerical Jacobian is
compared with the one that backward computes, one output element at a time.
Backward is also run a second time for a few rows to check that it is reentrant
(gives the same values within ``nondet_tol``).
"""
import numpy as np

from .. import _dtype
from . import grad_mode
from .engine import grad as autograd_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised when the analytical and numerical gradients disagree."""


def _tensor_cls():
    from .._tensor import Tensor
    return Tensor


def _as_tuple(x):
    if isinstance(x, _tensor_cls()):
        return (x,)
    return tuple(x)


def _differentiable_outputs(outputs):
    Tensor = _tensor_cls()
    return [o for o in outputs if isinstance(o, Tensor) and o.requires_grad]


def _float_outputs(outputs):
    Tensor = _tensor_cls()
    return [o for o in outputs if isinstance(o, Tensor) and (o.is_floating_point() or o.is_complex())]


# A complex tensor takes part as twice as many real numbers, (real, imag) interleaved: its Jacobian
# columns come from perturbing each part, its rows from the gradients of the real loss Re(y_j)
# (grad_output 1) and of Im(y_j) (grad_output 1j), by PyTorch's convention for complex gradients.
def _host(t):
    """The values of ``t`` as a new flat float64 array ((real, imag) pairs for a complex tensor)."""
    a = t.detach().cpu()._data
    if a.dtype.kind == "c":
        return np.stack([np.asarray(a.real, np.float64), np.asarray(a.imag, np.float64)], -1).reshape(-1)
    return np.array(a, dtype=np.float64).reshape(-1)   # a copy: outputs may alias inputs


def _real_size(t):
    """How many real numbers ``t`` holds."""
    return t.numel() * (2 if t.is_complex() else 1)


def _check_perturbable(i, inp):
    data = inp._data
    if data.size == 0:   # NumPy gives empty arrays all-zero strides
        return
    for size, stride in zip(data.shape, data.strides):
        if stride == 0 and size > 1:
            raise ValueError(
                f"gradcheck: input {i} has a dimension of size {size} with stride 0 (e.g. made by "
                "expand): perturbing one element would change several. Pass a contiguous copy "
                "(.clone() or .contiguous()) instead.")


def _numerical_jacobian(fn, inputs, select_outputs, output_sizes, eps):
    """Per input that requires grad: a list (one per output) of (input numel, output numel) arrays."""
    Tensor = _tensor_cls()
    jacobians = []
    for i, inp in enumerate(inputs):
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            jacobians.append(None)
            continue
        _check_perturbable(i, inp)
        data = inp._data
        shape = data.shape
        parts = (1, 1j) if inp.is_complex() else (1,)
        per_output = [np.zeros((_real_size(inp), size)) for size in output_sizes]
        for e in range(int(data.size)):
            idx = tuple(int(j) for j in np.unravel_index(e, shape)) if shape else ()
            orig = data[idx].item()
            for p, unit in enumerate(parts):
                data[idx] = orig + eps * unit
                try:
                    plus = [_host(o) for o in select_outputs(_as_tuple(fn(*inputs)))]
                    data[idx] = orig - eps * unit
                    minus = [_host(o) for o in select_outputs(_as_tuple(fn(*inputs)))]
                finally:
                    data[idx] = orig
                for k, (hi, lo) in enumerate(zip(plus, minus)):
                    per_output[k][e * len(parts) + p] = (hi - lo) / (2 * eps)
        jacobians.append(per_output)
    return jacobians


def _unit_grad(out, j):
    """The grad_output selecting real output number ``j`` (see ``_host``)."""
    from ..ops.creation import zeros_like
    g = zeros_like(out)
    if out.is_complex():
        g._data.reshape(-1)[j // 2] = 1j if j % 2 else 1
    else:
        g._data.reshape(-1)[j] = 1
    return g


def _vjp_row(out, diff_inputs, j, check_grad_dtypes):
    """Gradients of output element ``j`` of ``out`` w.r.t. ``diff_inputs`` as flat float64 arrays."""
    grads = autograd_grad((out,), diff_inputs, (_unit_grad(out, j),), retain_graph=True,
                          allow_unused=True)
    rows = []
    for i, (x, gx) in enumerate(zip(diff_inputs, grads)):
        if gx is None:
            rows.append(None)
            continue
        if tuple(gx.shape) != tuple(x.shape):
            raise GradcheckError(f"Gradient has shape {list(gx.shape)} but input {i} has shape "
                                 f"{list(x.shape)}")
        if check_grad_dtypes and gx.dtype != x.dtype:
            raise GradcheckError(f"Gradient has dtype mismatch: input {i} has dtype {x.dtype} but its "
                                 f"gradient has dtype {gx.dtype}")
        rows.append(_host(gx))
    return rows


def _analytical_jacobian(diff_inputs, outputs, nondet_tol, check_grad_dtypes):
    """Per input: a list (one per output) of (input numel, output numel) arrays, built column by
    column from backward. The first column of each output is computed twice (reentrancy)."""
    jac = {id(x): [np.zeros((_real_size(x), _real_size(o))) for o in outputs] for x in diff_inputs}
    for k, out in enumerate(outputs):
        for j in range(_real_size(out)):
            rows = _vjp_row(out, diff_inputs, j, check_grad_dtypes)
            for x, row in zip(diff_inputs, rows):
                if row is not None:
                    jac[id(x)][k][:, j] = row
            if j == 0:
                again = _vjp_row(out, diff_inputs, j, check_grad_dtypes)
                for i, (a, b) in enumerate(zip(rows, again)):
                    a = np.zeros(_real_size(diff_inputs[i])) if a is None else a
                    b = np.zeros(_real_size(diff_inputs[i])) if b is None else b
                    diff = float(np.max(np.abs(a - b))) if a.size else 0.0
                    if diff > nondet_tol:
                        raise GradcheckError(
                            f"Backward is not reentrant, i.e., running backward with same input and "
                            f"grad_output multiple times gives different values (max difference {diff:g} "
                            f"for output {k} with respect to input {i}). The tolerance for "
                            f"nondeterminism was {nondet_tol}.")
    return jac


def _mismatch_message(k, i, num, ana, atol, rtol):
    bad = np.abs(ana - num) - (atol + rtol * np.abs(num))
    r, c = np.unravel_index(int(np.argmax(bad)), bad.shape)
    return (f"Jacobian mismatch for output {k} with respect to input {i},\n"
            f"worst entry: d output[{c}] / d input[{r}] (flat indices): numerical {num[r, c]:.10g}, "
            f"analytical {ana[r, c]:.10g}, |difference| {abs(num[r, c] - ana[r, c]):.3g} "
            f"(atol={atol}, rtol={rtol}),\n"
            f"numerical:{num}\nanalytical:{ana}\n")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """True when the gradients of ``func(*inputs)`` match finite differences.

    Raises :class:`GradcheckError` on a mismatch (or returns False with
    ``raise_exception=False``). ``nondet_tol`` is how far two runs of backward on the
    same inputs may differ.
    """
    try:
        with grad_mode.enable_grad():
            return _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol, check_grad_dtypes)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes):
    Tensor = _tensor_cls()
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    if not diff_inputs:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of "
                         "them have requires_grad=True.")
    for x in diff_inputs:
        if x.dtype in (_dtype.float16, _dtype.float32, _dtype.complex64):
            import warnings
            warnings.warn("Input to gradcheck is not double precision floating point; the check "
                          "will likely fail.", UserWarning, stacklevel=4)
    outputs = _differentiable_outputs(_as_tuple(func(*inputs)))
    if not outputs:
        # Nothing is differentiable: then the function must not depend on its inputs.
        float_outs = _float_outputs(_as_tuple(func(*inputs)))
        numerical = _numerical_jacobian(func, inputs, _float_outputs,
                                        [_real_size(o) for o in float_outs], eps)
        for i, num in enumerate(numerical):
            for k, jk in enumerate(num or ()):
                if not np.allclose(jk, 0, atol=atol):
                    raise GradcheckError(f"Numerical gradient for function expected to be zero "
                                         f"(output {k} with respect to input {i}), as no output "
                                         f"requires grad")
        return True
    numerical = _numerical_jacobian(func, inputs, _differentiable_outputs,
                                    [_real_size(o) for o in outputs], eps)
    analytical = _analytical_jacobian(diff_inputs, outputs, nondet_tol, check_grad_dtypes)
    for i, (x, num) in enumerate(zip(inputs, numerical)):
        if num is None:
            continue
        for k in range(len(outputs)):
            ana = analytical[id(x)][k]
            if num[k].shape != ana.shape:
                raise GradcheckError(f"output {k} changed size between calls: numerical Jacobian "
                                     f"{num[k].shape}, analytical {ana.shape}")
            if not np.allclose(ana, num[k], rtol=rtol, atol=atol):
                raise GradcheckError(_mismatch_message(k, i, num[k], ana, atol, rtol))
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Gradcheck of the first derivative: checks second-order gradients of ``func``.

    ``grad_outputs`` (random, fixed seed, when not given) are the vectors of the
    vector-Jacobian product being differentiated; they are checked as inputs too.
    """
    from ..ops.creation import zeros_like
    inputs = _as_tuple(inputs)
    with grad_mode.enable_grad():
        outputs = _differentiable_outputs(_as_tuple(func(*inputs)))
    if grad_outputs is None:
        rng = np.random.default_rng(1234)
        grad_outputs = []
        for o in outputs:
            g = zeros_like(o)
            values = rng.standard_normal(o._data.shape)
            if o.is_complex():
                values = values + 1j * rng.standard_normal(o._data.shape)
            g._data[...] = g._device.backend.asarray(values, g._data.dtype, g._device)
            if gen_non_contig_grad_outputs and g.dim() >= 2:
                g = g.transpose(0, 1).contiguous().transpose(0, 1)
            grad_outputs.append(g.requires_grad_(True))
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    Tensor = _tensor_cls()

    def first_derivative(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _differentiable_outputs(_as_tuple(func(*ins)))
        d_inputs = [x for x in ins if isinstance(x, Tensor) and x.requires_grad]
        grads = autograd_grad(outs, d_inputs, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_grad_dtypes=check_grad_dtypes)
