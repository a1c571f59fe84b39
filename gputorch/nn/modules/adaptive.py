"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2016) for large vocabularies.

The ``cutoffs`` split the classes into a shortlist (``[0, cutoffs[0])``), kept in the head, and
clusters; the head scores the shortlist plus one entry per cluster, and each cluster has a tail
(a low-rank projection ``in_features -> in_features // div_value ** (i + 1) -> cluster size``).
A target's log-probability is its head log-probability (shortlist) or its cluster's head
log-probability plus its log-probability within the cluster.
"""
from collections import namedtuple

from ...ops.creation import zeros
from ...ops.shape import cat
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax: ``forward(input, target)`` returns ``(output, loss)`` with ``output`` the
    log-probability of each target ``(N,)`` and ``loss`` the mean negative log-likelihood.

    Shapes: input ``(N, in_features)`` or ``(in_features,)``, target ``(N,)`` or ``()`` with
    classes in ``[0, n_classes)``. ``log_prob(input)`` gives all ``(N, n_classes)``
    log-probabilities, ``predict(input)`` the most likely class.
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        factory = dict(device=device, dtype=dtype)
        self.head = Linear(self.in_features, self.head_size, bias=self.head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(self.in_features // (self.div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(self.in_features, hsz, bias=False, **factory),
                                        Linear(hsz, osz, bias=False, **factory)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        is_batched = targ_dim > 0
        input = input_ if is_batched else input_.unsqueeze(0)
        target = target_ if is_batched else target_.unsqueeze(0)
        batch_size = target.size(0)
        output = zeros(batch_size, dtype=input.dtype, device=input.device)
        gather_inds = target.new_empty(batch_size)
        bounds = [0] + self.cutoffs
        used_rows = 0
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            if i == 0:
                gather_inds = gather_inds.index_copy(0, rows, target[mask])
            else:
                relative = target[mask] - low
                cluster_output = self.tail[i - 1](input.index_select(0, rows))
                gather_inds = gather_inds.index_fill(0, rows, self.shortlist_size + i - 1)
                local = F.log_softmax(cluster_output, dim=1).gather(1, relative.unsqueeze(1))
                output = output.index_copy(0, rows, local.squeeze(1))
            used_rows += rows.numel()
        if used_rows != batch_size:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        if not is_batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        pieces = [head_logprob[:, :self.shortlist_size]]
        for i in range(len(self.cutoffs) - 1):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            pieces.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(pieces, 1)

    def log_prob(self, input):
        """All log-probabilities: ``(N, in_features)`` -> ``(N, n_classes)`` (or unbatched)."""
        is_batched = input.dim() > 1
        x = input if is_batched else input.unsqueeze(0)
        out = self._get_full_log_prob(x, self.head(x))
        return out if is_batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each row: ``(N, in_features)`` -> ``(N,)`` (or unbatched)."""
        is_batched = input.dim() > 1
        x = input if is_batched else input.unsqueeze(0)
        head_output = self.head(x)
        output = head_output.argmax(dim=1)
        outside = output >= self.shortlist_size
        if not bool(outside.any()):
            result = output
        elif bool(outside.all()):
            result = self._get_full_log_prob(x, head_output).argmax(dim=1)
        else:
            best = self._get_full_log_prob(x[outside], head_output[outside]).argmax(dim=1)
            result = output.masked_scatter(outside, best)
        return result if is_batched else result.squeeze(0)
