"""Adafactor: Adam-like steps from a factored (row and column) second-moment estimate, with
relative step sizes and update clipping."""
import numpy as np

from .._tensor import Tensor
from ..ops.creation import zeros
from .adam import steps_as_tensors
from .optimizer import Optimizer, apply_update, as_float, increment_step, lerp_, new_step_counter
from .._type_info import finfo

__all__ = ["Adafactor", "adafactor_update"]


def _rms_norm_ratio(xp, array, scale):
    """``||array||_2 / scale`` as a Python number."""
    return float(xp.sqrt(xp.sum(xp.multiply(array, array)))) / scale


def adafactor_update(params, grads, row_vars, col_vars, variances, steps, *, lr, beta2_decay, eps1, eps2, d,
                     weight_decay, maximize, xp):
    """One Adafactor step on arrays, in place, in PyTorch's order of operations.

    For a parameter of 2 or more dimensions, ``row_vars[i]`` (shape ``(..., m, 1)``) and
    ``col_vars[i]`` (``(..., 1, n)``) hold running means of the squared gradient over its last
    and second-to-last dimensions, and ``variances[i]`` is None; for a vector (or scalar) it is
    the other way round. ``steps``: the counts after this step's increment.
    """
    for i, param in enumerate(params):
        grad = grads[i]
        if maximize:
            grad = xp.negative(grad)
        step = steps[i]
        weight = step ** beta2_decay                 # 1 - beta2_t
        rho = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, _rms_norm_ratio(xp, param, param.size ** 0.5)) * rho
        if weight_decay != 0:
            param *= 1 - lr * weight_decay
        if grad.ndim > 1:
            row_var, col_var = row_vars[i], col_vars[i]
            row_mean = xp.sqrt(xp.sum(xp.multiply(grad, grad), axis=-1, keepdims=True))  # norm(dim=-1)
            xp.square(row_mean, out=row_mean)
            row_mean /= grad.shape[-1]
            lerp_(xp, row_var, row_mean, weight)
            col_mean = xp.sqrt(xp.sum(xp.multiply(grad, grad), axis=-2, keepdims=True))
            xp.square(col_mean, out=col_mean)
            col_mean /= grad.shape[-2]
            lerp_(xp, col_var, col_mean, weight)
            estimate = xp.matmul(row_var, col_var)
            row_scale = xp.mean(row_var, axis=-2, keepdims=True)
            xp.maximum(row_scale, eps1, out=row_scale)
            estimate /= row_scale
        else:
            variance = variances[i]
            lerp_(xp, variance, xp.multiply(grad, grad), weight)
            estimate = variance.copy()
        xp.maximum(estimate, eps1 * eps1, out=estimate)
        update = xp.sqrt(estimate, out=estimate)
        xp.reciprocal(update, out=update)
        update *= grad
        denom = max(1.0, _rms_norm_ratio(xp, update, (update.size ** 0.5) * d))
        update *= -alpha / denom                     # add_(update, alpha=-alpha / denom)
        param += update


class Adafactor(Optimizer):
    """Adafactor (PyTorch's ``torch.optim.Adafactor``).

    Args:
        params: parameters or parameter groups (real).
        lr (float): learning rate, an upper bound of the relative step size ``1 / sqrt(step)``.
            Default: 1e-2.
        beta2_decay (float): the second-moment weight of step ``t`` is ``t ** beta2_decay``
            (<= 0). Default: -0.8.
        eps (tuple[float | None, float]): floor of the second-moment estimate (None: the machine
            epsilon of the parameters' dtype) and of the parameters' root mean square.
            Default: (None, 1e-3).
        d (float): clipping threshold of the update's root mean square (>= 1). Default: 1.0.
        weight_decay (float): decoupled weight decay. Default: 0.0.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        foreach: accepted for PyTorch compatibility; it does not change the numerics.

    State per parameter: ``step`` (0-d float tensor on the CPU) and ``row_var``, ``col_var``
    (parameters of 2 or more dimensions) or ``variance`` (vectors).
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            steps_as_tensors(self.state, group)

    def step(self, closure=None):
        """One optimization step; returns the closure's loss (if a closure is given)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None and p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
            params = self._params_with_grad(group, "Adafactor")
            if not params:
                continue
            row_vars, col_vars, variances, steps = [], [], [], []
            for p in params:
                state = self._param_state(p)
                grad = p._grad
                if len(state) == 0:
                    state["step"] = new_step_counter()
                    if grad.dim() > 1:
                        state["row_var"] = zeros(grad.shape[:-1] + (1,), dtype=grad.dtype, device=grad.device)
                        state["col_var"] = zeros(grad.shape[:-2] + (1,) + grad.shape[-1:], dtype=grad.dtype,
                                                 device=grad.device)
                    else:
                        state["variance"] = zeros(grad.shape, dtype=grad.dtype, device=grad.device)
                for key, arrays in (("row_var", row_vars), ("col_var", col_vars), ("variance", variances)):
                    arrays.append(state[key]._data if key in state else None)
                steps.append(increment_step(state["step"]))
            eps1, eps2 = group["eps"]
            if eps1 is None:  # (PyTorch takes it from the first parameter of the group)
                eps1 = finfo(params[0]._dtype).eps
            apply_update(adafactor_update, params, [p._grad._data for p in params], row_vars, col_vars, variances,
                         steps, lr=as_float(group["lr"]), beta2_decay=group["beta2_decay"], eps1=eps1, eps2=eps2,
                         d=group["d"], weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss
