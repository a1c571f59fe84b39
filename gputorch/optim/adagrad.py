"""Adagrad: per-coordinate learning rates from the sum of squared gradients."""
from .._tensor import Tensor
from ..ops.creation import full_like
from .adam import steps_as_tensors
from .optimizer import (Optimizer, add_scaled, apply_update, as_float, check_flags, increment_step,
                        new_step_counter)

__all__ = ["Adagrad", "adagrad_update"]


def adagrad_update(params, grads, state_sums, steps, *, lr, weight_decay, lr_decay, eps, maximize, xp):
    """One Adagrad step on arrays, in place, in PyTorch's order of operations (``steps``: the
    counts after this step's increment)."""
    for i, param in enumerate(params):
        grad = grads[i]
        owned = False
        if maximize:
            grad = xp.negative(grad)
            owned = True
        if weight_decay != 0:
            grad = add_scaled(xp, grad, param, weight_decay, owned)
            owned = True
        clr = lr / (1 + (steps[i] - 1) * lr_decay)
        state_sum = state_sums[i]
        scratch = xp.multiply(grad, grad)            # addcmul_(grad, grad, value=1)
        state_sum += scratch
        std = xp.sqrt(state_sum, out=scratch)
        std += eps
        scaled = xp.multiply(grad, -clr, out=grad if owned else None)  # addcdiv_(grad, std, value=-clr)
        scaled /= std
        param += scaled


class Adagrad(Optimizer):
    """Adagrad (PyTorch's ``torch.optim.Adagrad``).

    Args:
        params: parameters or parameter groups.
        lr (float): learning rate. Default: 1e-2.
        lr_decay (float): learning rate decay per step. Default: 0.
        weight_decay (float): L2 penalty. Default: 0.
        initial_accumulator_value (float): starting value of the squared-gradient sums. Default: 0.
        eps (float): added to the denominator. Default: 1e-10.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        foreach, fused: accepted for PyTorch compatibility. differentiable: only False.

    As in PyTorch, the state (``step``, ``sum``) of every parameter exists from construction.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        check_flags(foreach, fused, differentiable)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = new_step_counter()
                state["sum"] = full_like(p, initial_accumulator_value)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
            steps_as_tensors(self.state, group)

    def step(self, closure=None):
        """One optimization step; returns the closure's loss (if a closure is given)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group, "Adagrad")
            if not params:
                continue
            sums, steps = [], []
            for p in params:
                state = self._param_state(p)
                if len(state) == 0:
                    state["step"] = new_step_counter()
                    state["sum"] = full_like(p, self.defaults["initial_accumulator_value"])
                sums.append(state["sum"]._data)
                steps.append(increment_step(state["step"]))
            apply_update(adagrad_update, params, [p._grad._data for p in params], sums, steps,
                         lr=as_float(group["lr"]), weight_decay=group["weight_decay"],
                         lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"])
        return loss
