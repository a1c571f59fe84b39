"""The per-op path: device check, backend override, grad mode, wrapping, graph recording.

Every op calls :func:`apply` (out-of-place) or :func:`apply_inplace`. This is the
hot path of the whole framework, so it is kept flat: one pass over the
arguments, one dictionary lookup for backend overrides, a node only when grad
mode is on and some input requires grad.

An op is a :class:`~gputorch.autograd.node.Node` subclass with
``forward(ctx, *args, **params)`` returning a backend array (or a tuple of
arrays) and ``backward(ctx, *grads)`` returning one gradient per tensor argument.
"""
import functools
import traceback

from . import _dtype
from ._bfloat16 import VIEW_OPS, forward_in_float32
from ._broadcast import broadcast_error
from ._fp_errors import IGNORE_ALL as _IGNORE_FP, STATE as _FP_STATE
from .amp.autocast_mode import STATE as _AUTOCAST, cast_inputs
from ._tracing import STATE as _TRACE
from .backends.base import elements_share_memory
from .backends.meta_mixing import REAL_AS_META
from ._tensor import Tensor, _grad_edge
from .autograd import anomaly_mode, grad_mode, saved_hooks
from .autograd.node import SavedTensor, move_retain_grad, next_sequence_nr

_GRAD_ENABLED = grad_mode.GRAD_ENABLED
_ANOMALY = anomaly_mode.ENABLED
_BY_NP = _dtype._BY_NP
_BFLOAT16 = _dtype.bfloat16


_NO_EDGE = (None, 0)
OVERLAP_MESSAGE = ("unsupported operation: more than one element of the written-to tensor refers to a single "
                   "memory location. Please clone() the tensor before performing the operation.")


class NoGradContext:
    """The ``ctx`` an op's forward gets when no graph is recorded: saving is a no-op."""

    def save_for_backward(self, *tensors):
        pass

    needs_input_grad = ()


def apply(cls, *args, **params):
    """Run op ``cls`` on ``args`` and return its output tensor(s)."""
    if _TRACE.graph is not None:   # inside gputorch.jit.trace: run the op, then record it
        return _traced(cls, args, params)
    if _AUTOCAST.active:   # inside an autocast region: the op's class may cast its inputs
        args = cast_inputs(cls, next(a for a in args if isinstance(a, Tensor))._device.type, args)
    tensors = [a for a in args if isinstance(a, Tensor)]
    dev = tensors[0]._device
    slow = False
    for t in tensors:
        if t._device is not dev or t._dtype._slow:   # several devices, complex or bfloat16 operands
            args, tensors, dev = _unusual_operands(cls, args, tensors)
            slow = True
            break
    backend = dev._backend
    forward = backend.overrides.get(cls) or cls.forward
    if slow and any(t._dtype is _BFLOAT16 for t in tensors):
        forward = functools.partial(forward_in_float32, cls, forward)
    record = False
    if _GRAD_ENABLED.value:
        for t in tensors:
            if t._requires_grad:
                record = True
                break
    if record:
        ctx = cls()
        edges = []
        for t in tensors:
            fn = t._grad_fn
            if fn is not None:
                edges.append((fn, t._output_nr))
            elif t._requires_grad:
                edges.append(_grad_edge(t))
            else:
                edges.append(_NO_EDGE)
        ctx.next_functions = tuple(edges)
        ctx._sequence_nr = next_sequence_nr()
        if _ANOMALY[0]:
            ctx._trace = traceback.format_stack()[:-1]
    else:
        ctx = NoGradContext()
    device_ctx = dev._ctx
    # NumPy's floating-point warnings off (PyTorch gives inf and NaN silently): quiet_errors, inlined
    quiet = None if _FP_STATE.get() is _IGNORE_FP else _FP_STATE.set(_IGNORE_FP)
    try:
        if device_ctx is None:
            out = forward(ctx, *args, **params)
        else:
            with device_ctx:
                out = forward(ctx, *args, **params)
    except ValueError as exc:
        if "broadcast" in str(exc):  # NumPy's and CuPy's words; PyTorch raises RuntimeError
            error = broadcast_error([t._data.shape for t in tensors])
            if error is not None:
                try:
                    raise error from None
                finally:
                    del error   # no frame -> exception -> traceback -> frame cycle holding the tensors
        raise
    except NotImplementedError as exc:
        if "not implemented for" not in str(exc):   # not a dtype refusal (e.g. a library refusing in a
            raise                                    # CUDA graph capture): its own words stand
        # a dtype the op refuses: PyTorch checks the shapes first
        error = broadcast_error([t._data.shape for t in tensors])
        if error is not None:
            try:
                raise error from None
            finally:
                del error
        raise
    except OverflowError as exc:  # a Python number that the tensor's dtype cannot hold
        raise RuntimeError(f"value cannot be converted to the tensor's type without overflow ({exc}) "
                           f"(when running {_op_name(cls)})") from None
    finally:
        if quiet is not None:
            _FP_STATE.reset(quiet)
    if cls.moves_device:
        dev = params["device"]
        backend = dev._backend
    array_type = backend.array_type
    if type(out) is tuple:
        results = tuple([_wrap(o, dev, array_type, backend) for o in out])
        if record:
            ctx._num_outputs = len(results)
            ctx._output_meta = [(r._data.shape, r._dtype, dev) for r in results]
        for r in results:
            if r._dtype.is_complex and not cls.supports_complex:
                raise complex_unsupported(cls)
        if record:
            for i, r in enumerate(results):
                if r._dtype._category >= 2:
                    r._grad_fn = ctx
                    r._output_nr = i
                    r._requires_grad = True
        return results
    if out.__class__ is not array_type:
        out = backend.ensure_array(out, dev)
    dt = _BY_NP[out.dtype]
    result = Tensor._make(out, dev, dt)
    if dt._category == 3 and not cls.supports_complex:   # a complex result from real operands
        raise complex_unsupported(cls)
    if record and dt._category >= 2:
        result._grad_fn = ctx
        result._requires_grad = True
        if ctx.saves_result:
            ctx._result_saved = SavedTensor(result, True)
    return result


def _traced(cls, args, params):
    """Run ``cls`` with tracing paused (ops it runs inside are part of it) and record it."""
    graph = _TRACE.graph
    _TRACE.graph = None
    try:
        result = apply(cls, *args, **params)
        graph.record(cls, args, params, result)   # paused too: copying a constant runs ops
    finally:
        _TRACE.graph = graph
    return result


def apply_view(cls, base, *args, **params):
    """Run a view op: the result shares ``base``'s storage and version counter."""
    VIEW_OPS.add(cls)
    result = apply(cls, base, *args, **params)
    result._vc = base._vc
    root = base._base
    result._base = base if root is None else root
    return result


def _wrap(out, dev, array_type, backend):
    if out.__class__ is not array_type:
        out = backend.ensure_array(out, dev)
    return Tensor._make(out, dev, _BY_NP[out.dtype])


def apply_inplace(cls, self, *args, **params):
    """Run op ``cls`` on ``(self, *args)`` and write the result into ``self``.

    Bumps the version counter, checks that the result fits ``self`` (shape and
    dtype) and, when a graph is recorded, makes the op's node ``self``'s new grad_fn.
    """
    recording = _GRAD_ENABLED.value and (self._requires_grad or any(
        isinstance(a, Tensor) and a._requires_grad for a in args))
    if recording:
        _check_inplace_allowed(self)
        base = self._base
        if base is not None and (self._grad_fn is not None or not base._requires_grad):
            from .ops.indexing import inplace_on_view   # PyTorch's CopySlices: the base's history changes
            return inplace_on_view(cls, self, args, params)
    old_history = (self._grad_fn, self._output_nr, self._requires_grad)
    if recording and saved_hooks.STATE.stack:
        # Saved-tensor hooks may keep ``self`` itself (no version check then): let the op see,
        # and save, a copy of its old value instead.
        src = Tensor._make(self._data.copy(), self._device, self._dtype)
        src._grad_fn, src._output_nr, src._requires_grad = old_history
        args = tuple([src if a is self else a for a in args])
        result = apply(cls, src, *args, **params)
    else:
        try:
            result = apply(cls, self, *args, **params)
        except NotImplementedError:   # a dtype the op refuses: PyTorch checks the output first
            error = _inplace_output_error(self, args)
            if error is not None:
                try:
                    raise error from None
                finally:
                    del error
            raise
    out = result._data
    if out.shape != self._data.shape:
        raise RuntimeError(
            f"output with shape {list(self._data.shape)} doesn't match the broadcast shape {list(out.shape)}")
    if result._dtype is not self._dtype and not _dtype.can_cast(result._dtype, self._dtype):
        raise RuntimeError(
            f"result type {result._dtype} can't be cast to the desired output type {self._dtype}")
    node = result._grad_fn
    if node is not None:
        _snapshot_saved_self(node, self, old_history)
    if out is not self._data:
        if elements_share_memory(self._data):
            raise RuntimeError(OVERLAP_MESSAGE)
        dev_ctx = self._device._ctx
        try:
            if dev_ctx is None:
                self._data[...] = out
            else:
                with dev_ctx:
                    self._data[...] = out
        except ValueError as exc:
            if "read-only" not in str(exc):
                raise
            if self._data.size:  # an expanded tensor: its elements share memory
                raise RuntimeError(OVERLAP_MESSAGE) from None
    self._vc[0] += 1
    if _TRACE.graph is not None:
        _TRACE.graph.rebind(self, result)
    if node is not None:
        self._grad_fn = node
        self._output_nr = 0
        self._requires_grad = True
        if node.saves_result:
            node._result_saved = SavedTensor(self, True)
        if self._retains_grad:
            move_retain_grad(self, old_history[0], old_history[1])
    return self


def _inplace_output_error(self, args):
    """PyTorch's error for an in-place op whose output ``self`` is expanded (elements sharing memory)
    or smaller than the broadcast shape of the operands; None when ``self`` can take the result."""
    x = self._data
    if elements_share_memory(x):
        return RuntimeError(OVERLAP_MESSAGE)
    shape = x.shape
    for a in args:
        if isinstance(a, Tensor):
            other = a._data.shape
            if len(other) > len(shape) or any(o not in (1, s) for o, s in zip(reversed(other), reversed(shape))):
                wide = [q if p == 1 else p for p, q in zip((1,) * (len(other) - len(shape)) + shape,
                                                  (1,) * (len(shape) - len(other)) + other)]
                return RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {wide}")
    return None


def _check_inplace_allowed(self):
    if self._grad_fn is None and self._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation.")
    base = self._base
    if base is not None and base._requires_grad and base._grad_fn is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation.")


def _snapshot_saved_self(node, self, old_history):
    """If the node saved ``self`` (about to be overwritten), save a copy of its old value instead."""
    saved = node._saved
    if not saved:
        return
    for i, s in enumerate(saved):
        if getattr(s, "tensor", None) is self:
            snap = Tensor._make(self._data.copy(), self._device, self._dtype)
            snap._grad_fn, snap._output_nr, snap._requires_grad = old_history
            saved[i] = SavedTensor(snap, False)


def _unusual_operands(cls, args, tensors):
    """The operands' slow path: complex operands (refused by ops without complex support) and
    operands on several devices (see :func:`_unify_devices`)."""
    if not cls.supports_complex and any(t._dtype.is_complex for t in tensors):
        raise complex_unsupported(cls)
    dev = tensors[0]._device
    if any(t._device is not dev for t in tensors):
        return _unify_devices(cls, args, tensors)
    return args, tensors, dev


def complex_unsupported(cls):
    """The error for an op that gputorch does not compute on complex tensors (yet)."""
    return NotImplementedError(f'"{_op_name(cls)}" not implemented for complex tensors in gputorch (the '
                               f'README\'s "Complex numbers" lists the ops that are)')


def _unify_devices(cls, args, tensors):
    """Allow 0-dim CPU tensors beside tensors of another device (moved along); else raise.

    Inside ``backends.meta_mixing.real_tensors_as_meta`` (a memory estimate's replay), beside a meta
    tensor, a real tensor (a target or a weight that a loss replayed on the meta
    device closes over) takes part as a new meta tensor of its shape and dtype, outside the graph
    (as PyTorch's fake tensors treat real ones): its data is neither read nor copied, and no
    gradient flows back into it."""
    meta = next((t._device for t in tensors if t._device.type == "meta"), None)
    if meta is not None and REAL_AS_META[0]:
        xp = meta.backend.xp
        moved = [Tensor._make(xp.empty(a._data.shape, a._data.dtype), meta, a._dtype)
                 if isinstance(a, Tensor) and a._device.type != "meta" else a for a in args]
        return moved, [a for a in moved if isinstance(a, Tensor)], meta
    devices = {t._device for t in tensors}
    main = [t._device for t in tensors if not (t._device.type == "cpu" and t._data.ndim == 0)]
    if len(set(main)) > 1 or not main:
        first, second = sorted({str(d) for d in (main or devices)})[:2]
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but found at least two devices, "
            f"{first} and {second}! (when checking arguments for {_op_name(cls)})")
    dev = main[0]
    moved = [a.to(dev) if isinstance(a, Tensor) and a._device is not dev else a for a in args]
    del devices
    return moved, [a for a in moved if isinstance(a, Tensor)], dev


def _op_name(cls):
    name = cls.__name__
    return name[:name.find("Backward")] if "Backward" in name else name
