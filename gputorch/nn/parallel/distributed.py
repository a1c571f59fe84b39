"""``DistributedDataParallel``: one model replica per process, gradients averaged during backward."""
import contextlib

from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...autograd.node import AccumulateGrad
from ..modules.module import Module
from ._reducer import Reducer

__all__ = ["DistributedDataParallel"]


def _tensors_in(value, out):
    from ..._tensor import Tensor
    if isinstance(value, Tensor):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _tensors_in(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _tensors_in(v, out)
    return out


def _moved(value, device):
    """``value`` with every tensor in it (nested in tuples, lists and dicts) on ``device``."""
    from ..._tensor import Tensor
    if isinstance(value, Tensor):
        return value.to(device)
    if isinstance(value, tuple):
        return type(value)(*(_moved(v, device) for v in value)) if hasattr(value, "_fields") \
            else tuple(_moved(v, device) for v in value)
    if isinstance(value, list):
        return [_moved(v, device) for v in value]
    if isinstance(value, dict):
        return {k: _moved(v, device) for k, v in value.items()}
    return value


def _leaves_reached(outputs):
    """The ids of the leaf tensors whose AccumulateGrad nodes the outputs' graphs reach."""
    stack = [t._grad_fn for t in outputs if t._grad_fn is not None]
    seen, leaves = set(), set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, AccumulateGrad):
            leaves.add(id(node.variable))
            continue
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    for t in outputs:
        if t._grad_fn is None and t._requires_grad:
            leaves.add(id(t))
    return leaves


class DistributedDataParallel(Module):
    """Data-parallel training over a process group: each process runs ``module`` on its own part of the
    batch and the gradients are averaged across processes during backward.

    At construction the parameters and buffers of rank 0 are broadcast to every rank, so all replicas
    start equal; in training, buffers (batch-norm statistics) are broadcast from rank 0 before each
    forward (``broadcast_buffers``). Gradients are reduced in buckets (see ``_reducer.py``) that
    overlap the rest of the backward pass; after ``backward()`` every rank holds the same averaged
    ``.grad``. ``state_dict`` keys carry the ``module.`` prefix, as in PyTorch.

    Args:
        module (Module): the replica.
        device_ids (list): with one device (PyTorch's one-device-per-process form), tensor inputs are
            moved to it before the forward, as PyTorch does.
        output_device, dim: accepted as in PyTorch.
        broadcast_buffers (bool): sync buffers from rank 0 at every training forward (default True).
        process_group: the group to average over (default: the default group).
        bucket_cap_mb (float): bucket size cap in MiB (default 25; the first bucket is 1 MiB).
        find_unused_parameters (bool): allow parameters that get no gradient in an iteration.
        gradient_as_bucket_view (bool): make ``.grad`` views of the bucket buffers.
        static_graph (bool): accepted (the reducer re-discovers readiness every iteration anyway).
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 init_sync=True, process_group=None, bucket_cap_mb=None, find_unused_parameters=False,
                 check_reduction=False, gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None, mixed_precision=None,
                 device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        from ... import distributed as dist
        from ...distributed.process_group import resolve
        pg = resolve(process_group)
        if pg is None:
            raise ValueError("DistributedDataParallel: this process is not part of the process group given")
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        devices = {p.device for _, p in named}
        if len(devices) > 1:
            raise ValueError(f"DistributedDataParallel: the module's parameters are on several devices {sorted(map(str, devices))}; "
                             "use one device per process")
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else None
        if self.device_ids is not None and len(self.device_ids) > 1:
            raise ValueError("DistributedDataParallel: one device per process; device_ids has "
                             f"{len(self.device_ids)} entries")
        self._input_device = None
        if self.device_ids:
            from ..._device import device as _device
            first = self.device_ids[0]
            self._input_device = first if isinstance(first, _device) else (
                _device("cuda", first) if isinstance(first, int) else _device(first))
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.process_group = pg
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap_mb = 25 if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap_mb * 1024 * 1024)
        self._dist = dist
        if init_sync:
            self._sync_module_states()
        self.reducer = Reducer([p for _, p in named], [n for n, _ in named], pg, self.bucket_bytes_cap,
                               find_unused_parameters, gradient_as_bucket_view)

    def _sync_module_states(self):
        """Broadcast every parameter and buffer from rank 0 of the group."""
        self._broadcast_coalesced(list(self.module.parameters()) + list(self.module.buffers()))

    def _sync_buffers(self):
        self._broadcast_coalesced(list(self.module.buffers()))

    def _broadcast_coalesced(self, tensors):
        """Broadcast ``tensors`` from the group's rank 0 with one collective per dtype and device (their
        values packed into one flat tensor, then copied back)."""
        groups = {}
        for t in tensors:
            if t.numel():
                groups.setdefault((t.dtype, t.device), []).append(t)
        from ...ops.shape.joining import cat
        root = self.process_group.global_rank(0)
        with no_grad():
            for members in groups.values():
                flat = cat([t.detach().reshape(-1) for t in members])
                self._dist.broadcast(flat, src=root, group=self.process_group)
                offset = 0
                for t in members:
                    n = t.numel()
                    t.data.copy_(flat[offset:offset + n].view(t.shape))
                    offset += n

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers and self.training and self.require_forward_param_sync:
            self._sync_buffers()
        if self._input_device is not None:
            inputs, kwargs = _moved(inputs, self._input_device), _moved(kwargs, self._input_device)
        outputs = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            unused = ()
            if self.find_unused_parameters:
                reached = _leaves_reached(_tensors_in(outputs, []))
                unused = [i for i, p in enumerate(self.reducer.params) if id(p) not in reached]
            self.reducer.prepare_for_backward(unused)
        return outputs

    @contextlib.contextmanager
    def no_sync(self):
        """Within this context gradients accumulate locally without communication; the first backward
        after it averages the accumulated gradients."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        self.reducer.enabled = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous
            self.reducer.enabled = previous

    def register_comm_hook(self, state, hook):
        """Reduce each bucket with ``hook(state, bucket) -> Future`` instead of the default all-reduce
        (see ``gputorch.distributed.algorithms.ddp_comm_hooks``). Call once, before training."""
        if self.reducer.comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        if not callable(hook):
            raise TypeError("register_comm_hook: hook must be callable")
        self.reducer.comm_hook = hook
        self.reducer.comm_state = state

    def bucket_sizes(self):
        """The bytes of each gradient bucket buffer, in launch order."""
        return [b.buffer.numel() * b.buffer.element_size() for b in self.reducer.buckets]

    def extra_repr(self):
        return f"buckets={len(self.reducer.buckets)}, bucket_cap_mb={self.bucket_bytes_cap / 2 ** 20:g}"
