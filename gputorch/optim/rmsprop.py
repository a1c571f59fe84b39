"""RMSprop: gradients scaled by a running average of their square (optionally centered, with momentum)."""
from .._tensor import Tensor
from ..ops.creation import zeros_like
from .adam import steps_as_tensors
from .optimizer import (Optimizer, add_scaled, apply_update, as_float, check_flags, increment_step,
                        lerp_, new_step_counter)

__all__ = ["RMSprop", "rmsprop_update"]


def rmsprop_update(params, grads, square_avgs, grad_avgs, momentum_buffers, *, lr, alpha, eps, weight_decay,
                   momentum, centered, maximize, xp):
    """One RMSprop step on arrays, in place, in PyTorch's order of operations.

    ``grad_avgs`` is empty unless ``centered``; ``momentum_buffers`` is empty unless ``momentum > 0``.
    """
    for i, param in enumerate(params):
        grad = grads[i]
        owned = False
        if maximize:
            grad = xp.negative(grad)
            owned = True
        if weight_decay != 0:
            grad = add_scaled(xp, grad, param, weight_decay, owned)
        square_avg = square_avgs[i]
        square_avg *= alpha
        scratch = xp.multiply(grad, 1 - alpha)      # addcmul_(grad, grad, value=1 - alpha)
        scratch *= grad
        square_avg += scratch
        if centered:
            grad_avg = grad_avgs[i]
            lerp_(xp, grad_avg, grad, 1 - alpha)
            xp.negative(grad_avg, out=scratch)       # square_avg.addcmul(grad_avg, grad_avg, value=-1)
            scratch *= grad_avg
            avg = xp.add(square_avg, scratch, out=scratch)
            xp.sqrt(avg, out=avg)
        else:
            avg = xp.sqrt(square_avg, out=scratch)
        avg += eps
        if momentum > 0:
            buf = momentum_buffers[i]
            buf *= momentum
            buf += xp.divide(grad, avg, out=avg)     # addcdiv_(grad, avg), value 1
            param += xp.multiply(buf, -lr, out=avg)  # add_(buf, alpha=-lr)
        else:
            scaled = xp.multiply(grad, -lr, out=grad if owned else None)  # addcdiv_(grad, avg, value=-lr)
            scaled /= avg
            param += scaled


class RMSprop(Optimizer):
    """RMSprop (PyTorch's ``torch.optim.RMSprop``).

    Args:
        params: parameters or parameter groups.
        lr (float): learning rate. Default: 1e-2.
        alpha (float): smoothing constant of the squared-gradient average. Default: 0.99.
        eps (float): added to the denominator. Default: 1e-8.
        weight_decay (float): L2 penalty. Default: 0.
        momentum (float): momentum factor. Default: 0.
        centered (bool): normalise by an estimate of the gradient's variance. Default: False.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        capturable, foreach: accepted for PyTorch compatibility. differentiable: only False.
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        check_flags(foreach, None, differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
            steps_as_tensors(self.state, group)

    def step(self, closure=None):
        """One optimization step; returns the closure's loss (if a closure is given)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group, "RMSprop")
            if not params:
                continue
            momentum, centered = group["momentum"], group["centered"]
            square_avgs, grad_avgs, buffers = [], [], []
            for p in params:
                state = self._param_state(p)
                if len(state) == 0:
                    state["step"] = new_step_counter()
                    state["square_avg"] = zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = zeros_like(p)
                    if centered:
                        state["grad_avg"] = zeros_like(p)
                increment_step(state["step"])
                square_avgs.append(state["square_avg"]._data)
                if momentum > 0:  # (a scheduler may turn momentum on after the first step)
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = zeros_like(p)
                    buffers.append(state["momentum_buffer"]._data)
                if centered:
                    if "grad_avg" not in state:
                        state["grad_avg"] = zeros_like(p)
                    grad_avgs.append(state["grad_avg"]._data)
            apply_update(rmsprop_update, params, [p._grad._data for p in params], square_avgs, grad_avgs,
                         buffers, lr=as_float(group["lr"]), alpha=group["alpha"], eps=group["eps"],
                         weight_decay=group["weight_decay"], momentum=momentum, centered=centered,
                         maximize=group["maximize"])
        return loss
