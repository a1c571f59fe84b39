"""Adamax: Adam with the infinity norm of past gradients in place of their root mean square."""
from .._tensor import Tensor
from .adam import steps_as_tensors
from .nadam import check_beta_range
from .optimizer import Optimizer, add_scaled, apply_update, as_float, check_flags, lerp_

__all__ = ["Adamax", "adamax_update"]


def adamax_update(params, grads, exp_avgs, exp_infs, steps, *, beta1, beta2, lr, weight_decay, eps, maximize, xp):
    """One Adamax step on arrays, in place, in PyTorch's order of operations (``steps``: the
    counts after this step's increment)."""
    for i, param in enumerate(params):
        grad = grads[i]
        owned = False
        if maximize:
            grad = xp.negative(grad)
            owned = True
        if weight_decay != 0:
            grad = add_scaled(xp, grad, param, weight_decay, owned)
        exp_avg, exp_inf = exp_avgs[i], exp_infs[i]
        lerp_(xp, exp_avg, grad, 1 - beta1)
        exp_inf *= beta2
        norm = xp.abs(grad)
        norm += eps
        xp.maximum(exp_inf, norm, out=exp_inf)
        clr = lr / (1 - beta1 ** steps[i])
        xp.multiply(exp_avg, -clr, out=norm)         # addcdiv_(exp_avg, exp_inf, value=-clr)
        norm /= exp_inf
        param += norm


class Adamax(Optimizer):
    """Adamax (PyTorch's ``torch.optim.Adamax``).

    Args:
        params: parameters or parameter groups.
        lr (float): learning rate. Default: 2e-3.
        betas (tuple[float, float]): coefficients of the gradient's running average and of the
            decay of its infinity norm. Default: (0.9, 0.999).
        eps (float): added to the infinity norm. Default: 1e-8.
        weight_decay (float): L2 penalty. Default: 0.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        foreach, capturable: accepted for PyTorch compatibility; they do not change the numerics.
        differentiable: only False.

    State per parameter: ``step`` (0-d float tensor on the CPU), ``exp_avg``, ``exp_inf``.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_beta_range(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
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
            params = self._params_with_grad(group, "Adamax")
            if not params:
                continue
            (exp_avgs, exp_infs), steps = self._step_states(params, ("exp_avg", "exp_inf"))
            beta1, beta2 = group["betas"]
            apply_update(adamax_update, params, [p._grad._data for p in params], exp_avgs, exp_infs, steps,
                         beta1=beta1, beta2=beta2, lr=as_float(group["lr"]), weight_decay=group["weight_decay"],
                         eps=group["eps"], maximize=group["maximize"])
        return loss
