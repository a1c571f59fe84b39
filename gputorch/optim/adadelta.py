"""Adadelta: step sizes from running averages of squared gradients and squared updates."""
from .._tensor import Tensor
from .adam import steps_as_tensors
from .optimizer import Optimizer, add_scaled, apply_update, as_float, check_flags

__all__ = ["Adadelta", "adadelta_update"]


def adadelta_update(params, grads, square_avgs, acc_deltas, *, lr, rho, eps, weight_decay, maximize, xp):
    """One Adadelta step on arrays, in place, in PyTorch's order of operations."""
    for i, param in enumerate(params):
        grad = grads[i]
        owned = False
        if maximize:
            grad = xp.negative(grad)
            owned = True
        if weight_decay != 0:
            grad = add_scaled(xp, grad, param, weight_decay, owned)
        square_avg, acc_delta = square_avgs[i], acc_deltas[i]
        square_avg *= rho
        scratch = xp.multiply(grad, 1 - rho)       # addcmul_(grad, grad, value=1 - rho)
        scratch *= grad
        square_avg += scratch
        std = xp.add(square_avg, eps, out=scratch)
        xp.sqrt(std, out=std)
        delta = xp.add(acc_delta, eps)
        xp.sqrt(delta, out=delta)
        delta /= std
        delta *= grad
        acc_delta *= rho
        xp.multiply(delta, 1 - rho, out=scratch)   # addcmul_(delta, delta, value=1 - rho)
        scratch *= delta
        acc_delta += scratch
        delta *= -lr                               # add_(delta, alpha=-lr)
        param += delta


class Adadelta(Optimizer):
    """Adadelta (PyTorch's ``torch.optim.Adadelta``).

    Args:
        params: parameters or parameter groups.
        lr (float): scale of the delta before it is applied. Default: 1.0.
        rho (float): coefficient of the running averages. Default: 0.9.
        eps (float): added inside the square roots. Default: 1e-6.
        weight_decay (float): L2 penalty. Default: 0.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        foreach, capturable: accepted for PyTorch compatibility. differentiable: only False.
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
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
            params = self._params_with_grad(group, "Adadelta")
            if not params:
                continue
            (square_avgs, acc_deltas), _ = self._step_states(params, ("square_avg", "acc_delta"))
            apply_update(adadelta_update, params, [p._grad._data for p in params], square_avgs, acc_deltas,
                         lr=as_float(group["lr"]), rho=group["rho"], eps=group["eps"],
                         weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss
