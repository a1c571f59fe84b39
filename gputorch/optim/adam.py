"""Adam (and, with ``decoupled_weight_decay=True``, AdamW)."""
from .._tensor import Tensor
from ..ops.creation import tensor as _tensor, zeros_like
from .optimizer import (Optimizer, add_scaled, apply_update, as_float, check_flags, increment_step,
                        lerp_, new_step_counter, scalar_dtype)

__all__ = ["Adam", "adam_update"]


def adam_update(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, amsgrad, beta1, beta2,
                lr, weight_decay, eps, maximize, decoupled_weight_decay, xp):
    """One Adam step on arrays, in place, in PyTorch's order of operations.

    ``steps`` holds each parameter's step count after this step's increment (Python numbers);
    ``max_exp_avg_sqs`` is empty unless ``amsgrad``.
    """
    for i, param in enumerate(params):
        grad = grads[i]
        owned = False
        if maximize:
            grad = xp.negative(grad)
            owned = True
        if weight_decay != 0:
            if decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                grad = add_scaled(xp, grad, param, weight_decay, owned)
        exp_avg, exp_avg_sq = exp_avgs[i], exp_avg_sqs[i]
        lerp_(xp, exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        scratch = xp.multiply(grad, 1 - beta2)     # addcmul_(grad, grad, value=1 - beta2)
        scratch *= grad
        exp_avg_sq += scratch
        step = steps[i]
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if amsgrad:
            xp.maximum(max_exp_avg_sqs[i], exp_avg_sq, out=max_exp_avg_sqs[i])
            denom = xp.sqrt(max_exp_avg_sqs[i])
        else:
            denom = xp.sqrt(exp_avg_sq)
        denom /= bias_correction2_sqrt
        denom += eps
        xp.multiply(exp_avg, -step_size, out=scratch)  # addcdiv_(exp_avg, denom, value=-step_size)
        scratch /= denom
        param += scratch


def check_betas(betas):
    """PyTorch's checks of Adam-style ``betas``; returns them as a tuple."""
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
    if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
        raise ValueError("betas must be either both floats or both Tensors")
    for i in (0, 1):
        if isinstance(betas[i], Tensor) and betas[i].numel() != 1:
            raise ValueError(f"Tensor betas[{i}] must be 1-element")
    return tuple(betas)


class Adam(Optimizer):
    """Adam (PyTorch's ``torch.optim.Adam``).

    Args:
        params: parameters or parameter groups.
        lr (float): learning rate. Default: 1e-3.
        betas (tuple[float, float]): running average coefficients of the gradient and of its
            square. Default: (0.9, 0.999).
        eps (float): added to the denominator. Default: 1e-8.
        weight_decay (float): L2 penalty (decoupled, as in AdamW, with
            ``decoupled_weight_decay=True``). Default: 0.
        amsgrad (bool): use the maximum of past squared-gradient averages. Default: False.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        foreach, capturable, fused: accepted for PyTorch compatibility. differentiable: only False.

    State per parameter: ``step`` (0-d float tensor on the CPU, as in PyTorch), ``exp_avg``,
    ``exp_avg_sq`` and, with amsgrad, ``max_exp_avg_sq``.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        betas = check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        check_flags(foreach, fused, differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
            steps_as_tensors(self.state, group)

    def step(self, closure=None):
        """One optimization step; returns the closure's loss (if a closure is given)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group, type(self).__name__)
            if not params:
                continue
            amsgrad = group["amsgrad"]
            exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps = [], [], [], []
            for p in params:
                state = self._param_state(p)
                if len(state) == 0:
                    state["step"] = new_step_counter()
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = zeros_like(p)
                exp_avgs.append(state["exp_avg"]._data)
                exp_avg_sqs.append(state["exp_avg_sq"]._data)
                if amsgrad:
                    if "max_exp_avg_sq" not in state:
                        state["max_exp_avg_sq"] = zeros_like(p)
                    max_exp_avg_sqs.append(state["max_exp_avg_sq"]._data)
                steps.append(increment_step(state["step"]))
            beta1, beta2 = group["betas"]
            apply_update(adam_update, params, [p._grad._data for p in params], exp_avgs, exp_avg_sqs,
                         max_exp_avg_sqs, steps, amsgrad=amsgrad, beta1=as_float(beta1),
                         beta2=as_float(beta2), lr=as_float(group["lr"]),
                         weight_decay=as_float(group["weight_decay"]), eps=group["eps"],
                         maximize=group["maximize"], decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def steps_as_tensors(state, group):
    """Old checkpoints keep ``step`` as a number; PyTorch 2.x keeps a 0-d float tensor."""
    for p in group["params"]:
        p_state = state.get(p)
        if p_state and "step" in p_state and not isinstance(p_state["step"], Tensor):
            p_state["step"] = _tensor(float(p_state["step"]), dtype=scalar_dtype())
