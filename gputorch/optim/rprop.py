"""Rprop: resilient backpropagation, per-coordinate step sizes adapted from gradient sign changes."""
from .._tensor import Tensor
from ..ops.creation import full_like, zeros_like
from .adam import steps_as_tensors
from .optimizer import Optimizer, apply_update, as_float, check_flags, increment_step, new_step_counter

__all__ = ["Rprop", "rprop_update"]


def rprop_update(params, grads, prevs, step_sizes, *, etaminus, etaplus, step_size_min, step_size_max, maximize,
                 xp):
    """One Rprop step on arrays, in place, in PyTorch's order of operations.

    Where the gradient keeps its sign the step size grows by ``etaplus``, where it flips it
    shrinks by ``etaminus`` and that coordinate's gradient counts as zero (no move now, no
    sign comparison next step); step sizes stay within ``[step_size_min, step_size_max]``.
    """
    for i, param in enumerate(params):
        grad = grads[i]
        if maximize:
            grad = xp.negative(grad)
        prev, step_size = prevs[i], step_sizes[i]
        factor = xp.multiply(grad, prev)
        xp.sign(factor, out=factor)
        factor[factor > 0] = etaplus
        factor[factor < 0] = etaminus
        factor[factor == 0] = 1
        step_size *= factor
        xp.clip(step_size, step_size_min, step_size_max, out=step_size)
        grad = grad.copy()
        grad[factor == etaminus] = 0
        direction = xp.sign(grad)                    # addcmul_(grad.sign(), step_size, value=-1)
        direction *= step_size
        param -= direction
        prev[...] = grad


class Rprop(Optimizer):
    """Rprop (PyTorch's ``torch.optim.Rprop``).

    Args:
        params: parameters or parameter groups.
        lr (float): initial step size. Default: 1e-2.
        etas (tuple[float, float]): multiplicative decrease and increase factors
            (``0 < etaminus < 1 < etaplus``). Default: (0.5, 1.2).
        step_sizes (tuple[float, float]): minimal and maximal step sizes. Default: (1e-6, 50).
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        foreach, capturable: accepted for PyTorch compatibility; they do not change the numerics.
        differentiable: only False.

    State per parameter: ``step`` (0-d float tensor on the CPU), ``prev`` (last gradient used),
    ``step_size``.
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        check_flags(foreach, None, differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
            steps_as_tensors(self.state, group)

    def step(self, closure=None):
        """One optimization step; returns the closure's loss (if a closure is given)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group, "Rprop")
            if not params:
                continue
            prevs, step_sizes = [], []
            for p in params:
                state = self._param_state(p)
                if len(state) == 0:
                    state["step"] = new_step_counter()
                    state["prev"] = zeros_like(p)
                    state["step_size"] = full_like(p._grad, as_float(group["lr"]))
                increment_step(state["step"])
                prevs.append(state["prev"]._data)
                step_sizes.append(state["step_size"]._data)
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            apply_update(rprop_update, params, [p._grad._data for p in params], prevs, step_sizes,
                         etaminus=etaminus, etaplus=etaplus, step_size_min=step_size_min,
                         step_size_max=step_size_max, maximize=group["maximize"])
        return loss
