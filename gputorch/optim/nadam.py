"""NAdam: Adam with Nesterov momentum, whose momentum coefficient warms up over the steps."""
from .._tensor import Tensor
from ..ops.creation import tensor as _tensor, zeros_like
from .adam import steps_as_tensors
from .optimizer import (Optimizer, add_scaled, apply_update, as_float, check_flags, increment_step,
                        lerp_, new_step_counter, scalar_dtype)

__all__ = ["NAdam", "nadam_update"]


def nadam_momentum(beta1, step, momentum_decay):
    """The momentum coefficient ``mu_t`` of step ``step`` (a Python number)."""
    return beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))


def nadam_update(params, grads, exp_avgs, exp_avg_sqs, steps, mu_products, *, beta1, beta2, lr, weight_decay,
                 momentum_decay, eps, decoupled_weight_decay, maximize, xp):
    """One NAdam step on arrays, in place, in PyTorch's order of operations.

    ``steps`` holds each parameter's step count after this step's increment and ``mu_products``
    the product of the momentum coefficients up to this step (both Python numbers, the latter
    read back from its stored scalar so that it carries that scalar's rounding).
    """
    for i, param in enumerate(params):
        grad = grads[i]
        owned = False
        if maximize:
            grad = xp.negative(grad)
            owned = True
        step = steps[i]
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                grad = add_scaled(xp, grad, param, weight_decay, owned)
        mu = nadam_momentum(beta1, step, momentum_decay)
        mu_next = nadam_momentum(beta1, step + 1, momentum_decay)
        exp_avg, exp_avg_sq = exp_avgs[i], exp_avg_sqs[i]
        lerp_(xp, exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        scratch = xp.multiply(grad, 1 - beta2)       # addcmul_(grad, grad, value=1 - beta2)
        scratch *= grad
        exp_avg_sq += scratch
        denom = xp.divide(exp_avg_sq, bias_correction2)
        xp.sqrt(denom, out=denom)
        denom += eps
        mu_product = mu_products[i]
        mu_product_next = mu_product * mu_next
        xp.multiply(grad, -lr * (1.0 - mu) / (1.0 - mu_product), out=scratch)  # addcdiv_(grad, denom, value=.)
        scratch /= denom
        param += scratch
        xp.multiply(exp_avg, (-lr * mu_next) / (1.0 - mu_product_next), out=scratch)
        scratch /= denom
        param += scratch


class NAdam(Optimizer):
    """NAdam (PyTorch's ``torch.optim.NAdam``).

    Args:
        params: parameters or parameter groups.
        lr (float): learning rate. Default: 2e-3.
        betas (tuple[float, float]): running average coefficients of the gradient and of its
            square. Default: (0.9, 0.999).
        eps (float): added to the denominator. Default: 1e-8.
        weight_decay (float): L2 penalty (decoupled, as in AdamW, with
            ``decoupled_weight_decay=True``). Default: 0.
        momentum_decay (float): how fast the momentum coefficient warms up to ``beta1``. Default: 4e-3.
        decoupled_weight_decay (bool): shrink the parameters instead of adding to the gradient. Default: False.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        foreach, capturable: accepted for PyTorch compatibility; they do not change the numerics.
        differentiable: only False.

    State per parameter: ``step`` and ``mu_product`` (0-d float tensors on the CPU, as in
    PyTorch; ``mu_product`` is the running product of the momentum coefficients), ``exp_avg``,
    ``exp_avg_sq``.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_beta_range(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        check_flags(foreach, None, differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            steps_as_tensors(self.state, group)
            for p in group["params"]:
                p_state = self.state.get(p)
                if p_state and "mu_product" in p_state and not isinstance(p_state["mu_product"], Tensor):
                    p_state["mu_product"] = _scalar(float(p_state["mu_product"]))

    def step(self, closure=None):
        """One optimization step; returns the closure's loss (if a closure is given)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group, "NAdam")
            if not params:
                continue
            beta1, beta2 = group["betas"]
            momentum_decay = group["momentum_decay"]
            exp_avgs, exp_avg_sqs, steps, mu_products = [], [], [], []
            for p in params:
                state = self._param_state(p, ("step", "mu_product"))
                if len(state) == 0:
                    state["step"] = new_step_counter()
                    state["mu_product"] = _scalar(1.0)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                exp_avgs.append(state["exp_avg"]._data)
                exp_avg_sqs.append(state["exp_avg_sq"]._data)
                step = increment_step(state["step"])
                steps.append(step)
                mu_product = state["mu_product"]
                mu_product.mul_(nadam_momentum(beta1, step, momentum_decay))
                mu_products.append(mu_product.item())
            apply_update(nadam_update, params, [p._grad._data for p in params], exp_avgs, exp_avg_sqs, steps,
                         mu_products, beta1=beta1, beta2=beta2, lr=as_float(group["lr"]),
                         weight_decay=group["weight_decay"], momentum_decay=momentum_decay, eps=group["eps"],
                         decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"])
        return loss


def _scalar(value):
    """A 0-d float tensor on the CPU holding ``value`` (in the dtype of ``step`` counters)."""
    return _tensor(value, dtype=scalar_dtype(), device="cpu")


def check_beta_range(betas):
    """PyTorch's range checks of Adam-style ``betas`` (without Adam's float-or-Tensor check)."""
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
