"""``gradcheck`` and ``gradgradcheck``: compare autograd with central finite differences.

Inputs should be float64 tensors; each one that requires grad is perturbed
element by element (in a float64 copy, on its own device) and the numerical
Jacobian is compared with the one that backward computes, row by row.
"""
import numpy as np

from .engine import grad as autograd_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised when the analytical and numerical gradients disagree."""


def _as_tuple(x):
    from .._tensor import Tensor
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _differentiable_outputs(outputs):
    return [o for o in outputs if o.requires_grad]


def _numerical_jacobian(fn, inputs, outputs_shape_sizes, eps):
    """Per (input, output): an array of shape (input numel, output numel)."""
    from .._tensor import Tensor
    jacobians = []
    for inp in inputs:
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            jacobians.append(None)
            continue
        n = inp.numel()
        per_output = [np.zeros((n, size)) for size in outputs_shape_sizes]
        flat = inp._data.reshape(-1) if inp._data.flags.c_contiguous else None
        if flat is None:
            raise ValueError("gradcheck needs contiguous inputs")
        for i in range(n):
            orig = flat[i].item()
            flat[i] = orig + eps
            plus = [_host(o) for o in _differentiable_outputs(_as_tuple(fn(*inputs)))]
            flat[i] = orig - eps
            minus = [_host(o) for o in _differentiable_outputs(_as_tuple(fn(*inputs)))]
            flat[i] = orig
            for k, (p, m) in enumerate(zip(plus, minus)):
                per_output[k][i] = ((p - m) / (2 * eps)).reshape(-1)
        jacobians.append(per_output)
    return jacobians


def _host(t):
    return np.array(t.detach().cpu()._data, dtype=np.float64)  # a copy: outputs may alias inputs


def _analytical_jacobian(inputs, outputs):
    """Row by row: backward of each output element."""
    from .._tensor import Tensor
    from ..ops.creation import zeros_like
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    jac = {id(x): [np.zeros((x.numel(), o.numel())) for o in outputs] for x in diff_inputs}
    for k, out in enumerate(outputs):
        for j in range(out.numel()):
            g = zeros_like(out)
            g._data.reshape(-1)[j] = 1
            grads = autograd_grad((out,), diff_inputs, (g,), retain_graph=True, allow_unused=True)
            for x, gx in zip(diff_inputs, grads):
                if gx is not None:
                    jac[id(x)][k][:, j] = _host(gx).reshape(-1)
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """True when the gradients of ``func(*inputs)`` match finite differences."""
    from .._tensor import Tensor
    inputs = _as_tuple(inputs)
    for x in inputs:
        if isinstance(x, Tensor) and x.requires_grad and x.dtype.itemsize < 8 and x.is_floating_point():
            import warnings
            warnings.warn("Input to gradcheck is not double precision floating point; the check "
                          "will likely fail.", UserWarning, stacklevel=2)
    outputs = _differentiable_outputs(_as_tuple(func(*inputs)))
    if not outputs:
        return True
    numerical = _numerical_jacobian(func, inputs, [o.numel() for o in outputs], eps)
    analytical = _analytical_jacobian(inputs, outputs)
    for i, (x, num) in enumerate(zip(inputs, numerical)):
        if num is None:
            continue
        for k in range(len(outputs)):
            a = analytical[id(x)][k]
            if not np.allclose(a, num[k], rtol=rtol, atol=atol):
                msg = (f"Jacobian mismatch for output {k} with respect to input {i},\n"
                       f"numerical:{num[k]}\nanalytical:{a}\n")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Gradcheck of the first derivative: checks second-order gradients of ``func``."""
    from .._tensor import Tensor
    from ..ops.creation import zeros_like
    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(_as_tuple(func(*inputs)))
    if grad_outputs is None:
        rng = np.random.default_rng(1234)
        grad_outputs = []
        for o in outputs:
            g = zeros_like(o)
            g._data[...] = g._device.backend.asarray(rng.standard_normal(o._data.shape), g._data.dtype, g._device)
            grad_outputs.append(g.requires_grad_(True))
    grad_outputs = _as_tuple(grad_outputs)
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    n_in = len(inputs)

    def first_derivative(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _differentiable_outputs(_as_tuple(func(*ins)))
        d_inputs = [x for x in ins if isinstance(x, Tensor) and x.requires_grad]
        grads = autograd_grad(outs, d_inputs, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    del diff_inputs
    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception)
