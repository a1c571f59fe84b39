"""SparseAdam: Adam masked to the coordinates present in sparse gradients (``nn.Embedding(sparse=True)``).

gputorch has no sparse tensors yet, so only PyTorch's constructor checks and its refusal of
dense gradients are here; the masked update waits for COO sparse tensors.
"""
from .._tensor import Tensor
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam (PyTorch's ``torch.optim.SparseAdam``): for dense parameters whose gradients
    are sparse.

    Args:
        params: parameters or parameter groups (dense, real).
        lr (float): learning rate (> 0). Default: 1e-3.
        betas (tuple[float, float]): running average coefficients of the gradient and of its
            square. Default: (0.9, 0.999).
        eps (float): added to the denominator (> 0). Default: 1e-8.
        maximize (bool): maximize the objective instead of minimizing. Default: False.

    ``step()`` raises ``RuntimeError`` for dense gradients, as PyTorch does; since gputorch has
    no sparse gradients yet, every gradient is dense.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        sparse, complex_ = [], []
        for index, group in enumerate(self.param_groups):
            for d_index, param in enumerate(group["params"]):
                if getattr(param, "is_sparse", False):
                    sparse.append([index, d_index])
                if param.is_complex():
                    complex_.append([index, d_index])
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors")
        if complex_:
            raise ValueError(f"Complex params at indices {complex_}: SparseAdam does not support complex "
                             "parameters")

    def step(self, closure=None):
        """One optimization step; returns the closure's loss (if a closure is given).

        Raises:
            RuntimeError: a parameter has a dense gradient.
            NotImplementedError: a sparse gradient (the update is not written yet).
        """
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if not getattr(p._grad, "is_sparse", False):
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
                raise NotImplementedError("SparseAdam's masked update needs COO sparse tensors, which gputorch "
                                          "does not have yet")
        return loss
