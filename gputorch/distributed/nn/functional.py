"""Differentiable collectives: their backward passes are collectives too.

``all_reduce(x, SUM)`` gives every rank ``y = sum_r x_r``; the loss of every rank depends on ``y``,
so the gradient for ``x_r`` is the sum over ranks of the gradients for ``y``: an all-reduce (SUM) of
the incoming gradient. SyncBatchNorm's batch statistics are built on it.
"""
from ...autograd.function import Function
from .. import collectives
from ..reduce_op import RedOpType, as_red_op

__all__ = ["all_reduce"]


class _AllReduceSum(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        out = tensor.clone()
        collectives.all_reduce(out, RedOpType.SUM, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        grad = grad_output.clone()
        collectives.all_reduce(grad, RedOpType.SUM, group=ctx.group)
        return None, grad


def all_reduce(tensor, op=RedOpType.SUM, group=None):
    """A new tensor: ``tensor`` reduced over the group (SUM or AVG), differentiable."""
    op = as_red_op(op)
    if op is RedOpType.SUM:
        return _AllReduceSum.apply(group, tensor)
    if op is RedOpType.AVG:
        from ..process_group import resolve
        return _AllReduceSum.apply(group, tensor) / resolve(group).size
    raise RuntimeError(f"gputorch.distributed.nn.functional.all_reduce: only SUM and AVG are differentiable, got {op.name}")
