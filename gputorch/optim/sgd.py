"""Stochastic gradient descent, optionally with momentum (heavy ball or Nesterov)."""
from .._tensor import Tensor
from .optimizer import Optimizer, add_scaled, apply_update, as_float, check_flags

__all__ = ["SGD", "sgd_update"]


def sgd_update(params, grads, momentum_buffers, *, lr, weight_decay, momentum, dampening, nesterov,
               maximize, xp):
    """One SGD step on arrays, in place, in PyTorch's order of operations.

    ``momentum_buffers`` holds one array per parameter (None where none exists yet: it becomes a
    copy of the first update direction) or is empty when ``momentum == 0``.
    """
    for i, param in enumerate(params):
        grad = grads[i]
        owned = False  # whether ``grad`` is a temporary of ours
        if maximize:
            grad = xp.negative(grad)
            owned = True
        if weight_decay != 0:
            grad = add_scaled(xp, grad, param, weight_decay, owned)
            owned = True
        if momentum != 0:
            buf = momentum_buffers[i]
            if buf is None:
                buf = grad if owned else grad.copy()
                momentum_buffers[i] = buf
                owned = False
            else:
                buf *= momentum
                if dampening == 0:
                    buf += grad
                else:
                    buf += xp.multiply(grad, 1 - dampening, out=grad if owned else None)
            if nesterov:
                scaled = xp.multiply(buf, momentum)
                grad = xp.add(grad, scaled, out=scaled)
                owned = True
            else:
                grad = buf
                owned = False
        param += xp.multiply(grad, -lr, out=grad if owned else None)


class SGD(Optimizer):
    """Stochastic gradient descent (PyTorch's ``torch.optim.SGD``).

    Args:
        params: parameters or parameter groups.
        lr (float): learning rate. Default: 1e-3.
        momentum (float): momentum factor. Default: 0.
        dampening (float): dampening of the momentum. Default: 0.
        weight_decay (float): L2 penalty. Default: 0.
        nesterov (bool): Nesterov momentum. Default: False.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        foreach, fused: accepted for PyTorch compatibility (the update always runs per device
            through the backend's update function). differentiable: only False.
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_flags(foreach, fused, differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure=None):
        """One optimization step; returns the closure's loss (if a closure is given)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group, "SGD")
            if not params:
                continue
            momentum = group["momentum"]
            buffers = []
            if momentum != 0:
                for p in params:
                    buf = self._param_state(p).get("momentum_buffer")
                    buffers.append(None if buf is None else buf._data)
            apply_update(sgd_update, params, [p._grad._data for p in params], buffers,
                         lr=as_float(group["lr"]), weight_decay=as_float(group["weight_decay"]),
                         momentum=momentum, dampening=group["dampening"], nesterov=group["nesterov"],
                         maximize=group["maximize"])
            for p, array in zip(params, buffers):
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None or buf._data is not array:
                    state["momentum_buffer"] = Tensor._make(array, p._device)
        return loss
