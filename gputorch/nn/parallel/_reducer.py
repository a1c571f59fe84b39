"""The gradient reducer behind DistributedDataParallel.

Parameters are grouped into buckets in reverse registration order (roughly the order in which
backward produces their gradients), the first bucket small (1 MiB) so that communication starts
early, the others up to ``bucket_cap_mb``. Each bucket owns one flat buffer. A post-accumulate-grad
hook copies a parameter's gradient into its bucket's buffer; when a bucket is complete, it is
launched (buckets strictly in index order, so every rank posts its collectives in the same order)
as an asynchronous all-reduce of the gradients divided by the world size, or through the
registered communication hook. Every hook call also advances the collectives in flight (MPI moves
data only inside MPI calls). At the end of backward (an engine callback) the reducer launches what
is left, waits for every bucket and copies the averaged gradients back into ``.grad``.
"""
import weakref

import numpy as np

from ... import _dtype
from ..._device import device
from ..._tensor import Tensor
from ...autograd import engine
from ...autograd.grad_mode import no_grad

_FIRST_BUCKET_BYTES = 1 << 20

# The bucket buffers alive, ``{id: tensor}`` (weakly), and ``hook(buffer)`` callbacks run for each new
# one: how the memory profiler finds the communication buffers without the reducer knowing it.
BUCKET_BUFFERS = weakref.WeakValueDictionary()
BUCKET_HOOKS = []


class GradBucket:
    """One bucket as a communication hook sees it: ``buffer()`` (the flat gradients), ``index()``,
    ``is_last()``, ``parameters()``, ``gradients()`` (views of the buffer), ``set_buffer(t)``."""

    def __init__(self, index, buffer, params, offsets, is_last):
        self._index = index
        self._buffer = buffer
        self._params = params
        self._offsets = offsets
        self._is_last = is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, tensor):
        self._buffer.copy_(tensor)

    def is_last(self):
        return self._is_last

    def parameters(self):
        return list(self._params)

    def gradients(self):
        return [self._buffer[o:o + p.numel()].view(p.shape) for p, o in zip(self._params, self._offsets)]


class _Bucket:
    __slots__ = ("index", "params", "offsets", "buffer", "pending", "future")

    def __init__(self, index, params):
        self.index = index
        self.params = params
        self.offsets = []
        total = 0
        for p in params:
            self.offsets.append(total)
            total += p.numel()
        from ...ops.creation import zeros
        self.buffer = zeros(total, dtype=params[0].dtype, device=params[0].device)
        BUCKET_BUFFERS[id(self.buffer)] = self.buffer
        for hook in BUCKET_HOOKS:
            hook(self.buffer)
        self.pending = 0
        self.future = None


def assign_buckets(params, cap_bytes, first_cap_bytes=_FIRST_BUCKET_BYTES):
    """Group ``params`` (registration order) into buckets, last parameters first; a bucket holds one
    dtype and device and is closed when it reaches its size cap. Returns lists of parameter indices."""
    buckets, current, size, cap = [], [], 0, min(first_cap_bytes, cap_bytes)
    key = None
    for i in reversed(range(len(params))):
        p = params[i]
        k = (p.dtype, p.device)
        if current and (k != key or size >= cap):
            buckets.append(current)
            current, size, cap = [], 0, cap_bytes
        current.append(i)
        key = k
        size += p.numel() * p.element_size()
    if current:
        buckets.append(current)
    return buckets


class Reducer:
    """Averages the gradients of ``params`` over ``process_group`` during backward (see the module doc).

    Args:
        params (list[Parameter]): the parameters that require grad, in registration order.
        names (list[str]): their qualified names, for errors.
        process_group: the ProcessGroup.
        bucket_cap_bytes (int): the size cap of every bucket after the first.
        find_unused_parameters (bool): parameters that get no gradient are allowed (their slots are
            zero); otherwise they are an error that names them.
        gradient_as_bucket_view (bool): after reduction, ``.grad`` is a view into the bucket buffer
            (no second copy of the gradients).
    """

    def __init__(self, params, names, process_group, bucket_cap_bytes, find_unused_parameters=False,
                 gradient_as_bucket_view=False):
        self.params = params
        self.names = names
        self.pg = process_group
        self.find_unused = find_unused_parameters
        self.as_view = gradient_as_bucket_view
        self.bucket_indices = assign_buckets(params, bucket_cap_bytes)
        self.buckets = [_Bucket(b, [params[i] for i in idx]) for b, idx in enumerate(self.bucket_indices)]
        self.where = {}
        for bucket in self.buckets:
            for p, off in zip(bucket.params, bucket.offsets):
                self.where[id(p)] = (bucket, off)
        self.comm_hook = None
        self.comm_state = None
        self.enabled = True
        self._expect_backward = False
        self._ready = set()
        self._next_launch = 0
        self._callback_queued = False
        self._got_grad = set()
        for p in params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    # ------------------------------------------------------------------ per iteration
    def prepare_for_backward(self, unused=()):
        """Called at the end of a forward that will be followed by a synced backward; ``unused`` holds
        the indices of parameters the outputs do not depend on (find_unused_parameters)."""
        self._expect_backward = True
        self._ready = set()
        self._next_launch = 0
        self._callback_queued = False
        for b in self.buckets:
            b.pending = len(b.params)
            b.future = None
        self._got_grad = set()
        for i in unused:
            self._mark(self.params[i], None)

    def _grad_ready(self, param):
        if not (self.enabled and self._expect_backward):
            return
        if not self._callback_queued:
            self._callback_queued = True
            engine.queue_callback(self._finalize)
        self._mark(param, param.grad)
        self.pg.progress()

    def _mark(self, param, grad):
        if id(param) in self._ready:
            return
        self._ready.add(id(param))
        bucket, off = self.where[id(param)]
        with no_grad():
            view = bucket.buffer[off:off + param.numel()]
            if grad is None:
                view.zero_()
            else:
                view.copy_(grad.reshape(-1))
                self._got_grad.add(id(param))
        bucket.pending -= 1
        self._launch_ready()

    def _launch_ready(self):
        while self._next_launch < len(self.buckets) and self.buckets[self._next_launch].pending == 0:
            self._launch(self.buckets[self._next_launch])
            self._next_launch += 1

    def _launch(self, bucket):
        gb = GradBucket(bucket.index, bucket.buffer, bucket.params, bucket.offsets,
                        bucket.index == len(self.buckets) - 1)
        if self.comm_hook is None:
            from ...distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
            bucket.future = allreduce_hook(self.pg, gb)
        else:
            bucket.future = self.comm_hook(self.comm_state, gb)

    def _finalize(self):
        self._expect_backward = False
        missing = [i for i, p in enumerate(self.params) if id(p) not in self._ready]
        if missing and not self.find_unused:
            self._launch_ready()
            for b in self.buckets[:self._next_launch]:
                b.future.wait()
            names = ", ".join(self.names[i] for i in missing)
            raise RuntimeError(
                f"DistributedDataParallel: rank {self.pg.rank} got no gradient for parameter(s) {names} in this "
                "backward pass, so their buckets could not be reduced. Pass find_unused_parameters=True to "
                "DistributedDataParallel if some parameters are unused in some iterations, or make sure "
                "every parameter takes part in computing the loss.")
        for i in missing:
            self._mark(self.params[i], None)
        used_globally = self._global_usage() if self.find_unused else None
        for b in self.buckets:
            result = b.future.wait()
            if isinstance(result, (list, tuple)):
                result = result[0]
            with no_grad():
                if result is not b.buffer:
                    b.buffer.copy_(result)
        with no_grad():
            for i, p in enumerate(self.params):
                if used_globally is not None and not used_globally[i]:
                    continue
                bucket, off = self.where[id(p)]
                view = bucket.buffer[off:off + p.numel()].view(p.shape)
                if self.as_view:
                    p.grad = view
                elif p.grad is None:
                    p.grad = view.clone()
                else:
                    p.grad.copy_(view)

    def _global_usage(self):
        """Which parameters got a gradient on at least one rank (one all-reduce of a usage map)."""
        from ... import distributed as dist
        used = np.array([id(p) in self._got_grad for p in self.params], dtype=np.uint8)
        t = Tensor._make(used, device("cpu"), _dtype.uint8)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.pg)
        return t._data.astype(bool)
