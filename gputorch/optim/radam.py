"""RAdam: Adam whose adaptive step is switched on, and rectified, once the variance estimate is reliable."""
from .._tensor import Tensor
from .adam import steps_as_tensors
from .nadam import check_beta_range
from .optimizer import Optimizer, add_scaled, apply_update, as_float, check_flags, lerp_

__all__ = ["RAdam", "radam_update"]


def radam_update(params, grads, exp_avgs, exp_avg_sqs, steps, *, beta1, beta2, lr, weight_decay, eps,
                 decoupled_weight_decay, maximize, xp):
    """One RAdam step on arrays, in place, in PyTorch's order of operations.

    While the approximated length of the simple moving average ``rho_t`` is at most 5 (the first
    few steps), the update is plain bias-corrected momentum; afterwards it is Adam's, scaled by the
    rectification term. ``steps``: the counts after this step's increment.
    """
    rho_inf = 2 / (1 - beta2) - 1
    for i, param in enumerate(params):
        grad = grads[i]
        owned = False
        if maximize:
            grad = xp.negative(grad)
            owned = True
        step = steps[i]
        if weight_decay != 0:
            if decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                grad = add_scaled(xp, grad, param, weight_decay, owned)
        exp_avg, exp_avg_sq = exp_avgs[i], exp_avg_sqs[i]
        lerp_(xp, exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        scratch = xp.multiply(grad, 1 - beta2)       # addcmul_(grad, grad, value=1 - beta2)
        scratch *= grad
        exp_avg_sq += scratch
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        update = xp.divide(exp_avg, bias_correction1)
        update *= lr
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            xp.sqrt(exp_avg_sq, out=scratch)
            scratch += eps
            xp.reciprocal(scratch, out=scratch)  # (sqrt(bias_correction2) / denom) as 1/denom * sqrt(...)
            scratch *= bias_correction2 ** 0.5
            update *= scratch
            update *= rect
        param -= update


class RAdam(Optimizer):
    """RAdam (PyTorch's ``torch.optim.RAdam``).

    Args:
        params: parameters or parameter groups.
        lr (float): learning rate. Default: 1e-3.
        betas (tuple[float, float]): running average coefficients of the gradient and of its
            square. Default: (0.9, 0.999).
        eps (float): added to the denominator. Default: 1e-8.
        weight_decay (float): L2 penalty (decoupled, as in AdamW, with
            ``decoupled_weight_decay=True``). Default: 0.
        decoupled_weight_decay (bool): shrink the parameters instead of adding to the gradient. Default: False.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        foreach, capturable: accepted for PyTorch compatibility; they do not change the numerics.
        differentiable: only False.

    State per parameter: ``step`` (0-d float tensor on the CPU), ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_beta_range(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay, "differentiable": differentiable}
        check_flags(foreach, None, differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("capturable", False)
            steps_as_tensors(self.state, group)

    def step(self, closure=None):
        """One optimization step; returns the closure's loss (if a closure is given)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group, "RAdam")
            if not params:
                continue
            (exp_avgs, exp_avg_sqs), steps = self._step_states(params, ("exp_avg", "exp_avg_sq"))
            beta1, beta2 = group["betas"]
            apply_update(radam_update, params, [p._grad._data for p in params], exp_avgs, exp_avg_sqs, steps,
                         beta1=beta1, beta2=beta2, lr=as_float(group["lr"]), weight_decay=group["weight_decay"],
                         eps=group["eps"], decoupled_weight_decay=group["decoupled_weight_decay"],
                         maximize=group["maximize"])
        return loss
