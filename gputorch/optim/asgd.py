"""ASGD: stochastic gradient descent with a decaying step size and a running average of the iterates."""
from .._tensor import Tensor
from ..ops.creation import ones, tensor as _tensor, zeros, zeros_like
from .adam import steps_as_tensors
from .optimizer import Optimizer, add_scaled, apply_update, as_float, check_flags, increment_step, scalar_dtype

__all__ = ["ASGD", "asgd_update"]

_SCALARS = ("step", "eta", "mu")  # all: 0-d tensors made on the parameter's device, kept where they are


def asgd_update(params, grads, axs, etas, mus, *, lambd, weight_decay, maximize, xp):
    """One ASGD step on arrays, in place, in PyTorch's order of operations.

    ``etas`` and ``mus`` are each parameter's current step size and averaging weight (Python
    numbers read back from their stored scalars); ``axs`` the running averages of the iterates.
    """
    for i, param in enumerate(params):
        grad = grads[i]
        owned = False
        if maximize:
            grad = xp.negative(grad)
            owned = True
        if weight_decay != 0:
            grad = add_scaled(xp, grad, param, weight_decay, owned)
            owned = True
        eta = etas[i]
        param *= 1 - lambd * eta
        param += xp.multiply(grad, -eta, out=grad if owned else None)  # add_(grad, alpha=-eta)
        ax = axs[i]
        if mus[i] != 1:
            delta = xp.subtract(param, ax)
            delta *= mus[i]
            ax += delta
        else:
            ax[...] = param


class ASGD(Optimizer):
    """Averaged stochastic gradient descent (PyTorch's ``torch.optim.ASGD``).

    Args:
        params: parameters or parameter groups.
        lr (float): learning rate. Default: 1e-2.
        lambd (float): decay term. Default: 1e-4.
        alpha (float): power of the step-size decay ``eta = lr / (1 + lambd * lr * step) ** alpha``.
            Default: 0.75.
        t0 (float): step at which averaging starts (``ax`` copies the parameter until then).
            Default: 1e6.
        weight_decay (float): L2 penalty. Default: 0.
        maximize (bool): maximize the objective instead of minimizing. Default: False.
        foreach, capturable: accepted for PyTorch compatibility; they do not change the numerics.
        differentiable: only False.

    State per parameter (as in PyTorch): ``step``, ``eta`` (current step size) and ``mu``
    (averaging weight), 0-d float tensors on the parameter's device, and ``ax``, the average.
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
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
            for p in group["params"]:
                p_state = self.state.get(p)
                for key in _SCALARS:
                    if p_state and key in p_state and not isinstance(p_state[key], Tensor):
                        p_state[key] = _tensor(float(p_state[key]), dtype=scalar_dtype(), device=p.device)

    def step(self, closure=None):
        """One optimization step; returns the closure's loss (if a closure is given)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group, "ASGD")
            if not params:
                continue
            lr, lambd, alpha, t0 = as_float(group["lr"]), group["lambd"], group["alpha"], group["t0"]
            axs, etas, mus, states = [], [], [], []
            for p in params:
                state = self._param_state(p, _SCALARS)
                if len(state) == 0:
                    state["step"] = zeros((), dtype=scalar_dtype(), device=p.device)
                    state["eta"] = _tensor(lr, dtype=scalar_dtype(), device=p.device)
                    state["mu"] = ones((), dtype=scalar_dtype(), device=p.device)
                    state["ax"] = zeros_like(p)
                axs.append(state["ax"]._data)
                etas.append(state["eta"].item())
                mus.append(state["mu"].item())
                states.append(state)
            apply_update(asgd_update, params, [p._grad._data for p in params], axs, etas, mus, lambd=lambd,
                         weight_decay=group["weight_decay"], maximize=group["maximize"])
            for state in states:
                step = increment_step(state["step"])
                state["eta"].fill_(_default_float(lr / ((1 + lambd * lr * step) ** alpha)))
                state["mu"].fill_(_default_float(1 / max(1, step - t0)))
        return loss


def _default_float(value):
    """``value`` rounded through the default float dtype (PyTorch makes a tensor of it first)."""
    return _tensor(value).item()
