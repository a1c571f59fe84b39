"""CUDA graphs: PyTorch's ``torch.cuda.CUDAGraph`` API over CuPy's stream capture.

A graph records the kernels that a piece of work launches once (capture) and launches them all
again with one call (replay), on the same memory: inputs are copied into the static input
tensors the graph was captured on, and outputs are read from its static output tensors. Python
and launch overhead is paid once, at capture.

Rules (PyTorch's), with the errors gputorch gives:

* Capture runs on a side stream (``graph`` makes one) and records, it does not compute: the
  static outputs hold garbage until the first ``replay()``.
* Shapes, dtypes, devices and the control flow are frozen at capture. Anything that needs a
  result on the host during capture (``.item()``, ``.cpu()``, ``print(t)``, ``bool(t)``,
  data-dependent shapes such as ``t[mask]`` or ``nonzero``) is refused with a RuntimeError,
  and a device synchronisation invalidates the capture (the error names
  ``cudaErrorStreamCaptureUnsupported``).
* Memory allocated during capture comes from the graph's private pool
  (:func:`graph_pool_handle`, shared between graphs with ``pool=``) and is owned by the graph
  until :meth:`CUDAGraph.reset`, so tensors created during capture stay valid for replays even
  when the Python objects that held them are gone.
* CuPy refuses cuBLAS during capture, so while a graph is captured the matrix products
  (matmul, mm, bmm, addmm, linear and their gradients) run on gputorch's own GEMM kernel
  (``kernels/gemm.cu``); results agree with the eager (cuBLAS) ones to rounding. Other cuBLAS,
  cuSOLVER and cuRAND users (``einsum``, ``tensordot``, ``linalg``) raise NotImplementedError.
* Dropout draws a fresh mask on every replay: the captured Philox kernels read the CUDA
  generator's ``(seed, offset)`` from device memory, which ``replay()`` fills with the
  generator's current state before moving the generator on by what one replay draws; the
  masks are those eager runs would draw in the same sequence.
"""
import gc
import weakref

import numpy as np

from .._device import device as Device
from ..backends import get_backend

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing", "make_graphed_callables"]

_MASK64 = 0xFFFFFFFFFFFFFFFF
_MODES = ("global", "thread_local", "relaxed")
_active = {"graph": None}     # the CUDAGraph being captured, if any


def _cupy():
    """The CuPy module (real or simulated); RuntimeError when CUDA is unavailable."""
    return get_backend("cuda")._require()


def is_current_stream_capturing():
    """Whether the current CUDA stream is capturing a graph (False without CUDA)."""
    backend = get_backend("cuda")
    if not backend.is_available():
        return False
    return bool(backend._cupy.cuda.get_current_stream().is_capturing())


class _GraphPool:
    """A private memory pool: every block handed out while a graph captures stays owned by the
    pool (never returned to CuPy's default pool, so eager work cannot reuse memory that a
    replay writes), until the graphs sharing it are reset."""

    def __init__(self, cp):
        self._pool = cp.cuda.MemoryPool()
        self._blocks = []

    def malloc(self, size):
        pointer = self._pool.malloc(size)
        self._blocks.append(pointer)
        return pointer

    @property
    def nbytes(self):
        return sum(int(getattr(getattr(b, "mem", b), "size", 0) or 0) for b in self._blocks)

    def __repr__(self):
        return f"<gputorch.cuda graph pool: {len(self._blocks)} blocks>"


def graph_pool_handle():
    """A handle to a new private memory pool, to share between graphs (``pool=`` of
    :class:`graph` and :meth:`CUDAGraph.capture_begin`)."""
    return _GraphPool(_cupy())


# ---------------------------------------------------------------- random numbers under replay
class _GraphRNG:
    """The default CUDA generator's ``(seed, offset)`` in device memory, for captured kernels.

    Captured dropout kernels read ``state`` (two uint64: seed, offset) and add their offset
    relative to ``base``, the generator's offset when the capture began. Capture itself draws
    nothing: at its end the generator goes back to ``base``, and the graph remembers how far
    one replay moves it (``increment``)."""

    # One per device while some graph holds it (graphs keep theirs in ``CUDAGraph._rng``): graphs
    # captured one after another (make_graphed_callables' forward and backward) share it, and no
    # device memory outlives the last of them.
    _by_device = weakref.WeakValueDictionary()

    def __init__(self, cp, generator):
        self.generator = generator
        self.state = cp.zeros(2, dtype=cp.uint64)
        self.base = 0
        self.seed = 0

    @classmethod
    def for_device(cls, cp, device_index):
        from ..random import default_generator_for
        generator = default_generator_for(Device("cuda", device_index))
        rng = cls._by_device.get(device_index)
        if rng is None or rng.generator is not generator:
            rng = cls._by_device[device_index] = cls(cp, generator)
        return rng

    @property
    def engine(self):
        return self.generator.engine

    def begin(self):
        self.base, self.seed = self.engine.offset, self.engine.seed

    def end(self):
        """How far the captured work moved the generator; puts it back where it was."""
        increment = (self.engine.offset - self.base) & _MASK64
        self.engine.offset = self.base
        return increment

    def before_replay(self, increment):
        """Write the generator's state for the kernels of a replay and move the generator on."""
        engine = self.engine
        self.state.set(np.array([engine.seed, engine.offset], dtype=np.uint64))
        engine.offset = (engine.offset + increment) & _MASK64


def capturing():
    """Whether a gputorch graph is being captured on the current stream (for the kernel wrappers
    that must not copy host tables to the device then)."""
    g = _active["graph"]
    return g is not None and bool(g._stream.is_capturing())


def capture_rng_offset(seed, offset):
    """For a kernel captured into the graph in progress: ``(state array, offset relative to the
    state's)``, or None when no gputorch graph is being captured on the current stream."""
    g = _active["graph"]
    if g is None or not is_current_stream_capturing():
        return None
    rng = g._rng
    if seed != rng.seed:
        raise RuntimeError("random numbers drawn during CUDA graph capture must come from the default CUDA "
                           "generator of the capturing device (a generator= argument cannot be captured)")
    return rng.state, (offset - rng.base) & _MASK64


# ---------------------------------------------------------------- matrix products during capture
def _capture_product(x, y):
    """The GEMM kernel for products on the capturing stream (None elsewhere)."""
    g = _active["graph"]
    if g is None or not isinstance(x, g._cp.ndarray) or not g._stream.is_capturing():
        return None
    from .kernels import gemm
    return gemm.matmul(get_backend("cuda").xp, x, y)


# ---------------------------------------------------------------- the graph
class CUDAGraph:
    """A captured CUDA graph (``torch.cuda.CUDAGraph``).

    Capture with ``with gputorch.cuda.graph(g): ...`` (or :meth:`capture_begin` /
    :meth:`capture_end` on a side stream), then :meth:`replay`. ``keep_graph`` is accepted for
    PyTorch's signature; the executable graph is always kept.
    """

    def __init__(self, keep_graph=False):
        self._cp = _cupy()     # RuntimeError without CUDA, as torch raises
        self._graph = None
        self._pool = None
        self._stream = None
        self._rng = None
        self._increment = 0
        self._allocator = None
        self._route = None
        self._device_index = None

    def capture_begin(self, pool=None, capture_error_mode="global"):
        """Begin capturing the work queued on the current stream (not the default stream)."""
        if capture_error_mode not in _MODES:
            raise ValueError(f"capture_error_mode must be one of {', '.join(_MODES)}, got {capture_error_mode!r}")
        if self._graph is not None or self._stream is not None:
            raise RuntimeError("This CUDAGraph already holds a captured graph (or is capturing); call reset() "
                               "before capturing into it again")
        if _active["graph"] is not None:
            raise RuntimeError("another CUDA graph is being captured; captures cannot be nested")
        cp = self._cp
        stream = cp.cuda.get_current_stream()
        if stream.ptr == 0:
            raise RuntimeError("CUDA graphs must be captured on a non-default stream (use gputorch.cuda.graph, "
                               "which captures on a side stream); they may be replayed on any stream")
        if pool is not None and not isinstance(pool, _GraphPool):
            raise TypeError(f"pool must come from gputorch.cuda.graph_pool_handle() or CUDAGraph.pool(), got "
                            f"{type(pool).__name__}")
        self._device_index = cp.cuda.runtime.getDevice()
        self._pool = pool if pool is not None else _GraphPool(cp)
        self._rng = _GraphRNG.for_device(cp, self._device_index)     # allocated before the capture
        self._rng.begin()
        self._allocator = cp.cuda.using_allocator(self._pool.malloc)
        self._allocator.__enter__()
        from ..ops import _gemm
        self._route = _gemm.capture_route[0]
        _gemm.capture_route[0] = _capture_product
        _active["graph"] = self
        self._stream = stream
        try:
            # CuPy's pool grows with cudaMalloc, which only the relaxed mode permits during capture;
            # the "global" mode's protection (no synchronisation) is kept by gputorch's own checks.
            stream.begin_capture(cp.cuda.runtime.streamCaptureModeRelaxed)
        except BaseException:
            self._finish_capture()
            raise

    def _finish_capture(self):
        from ..ops import _gemm
        _gemm.capture_route[0] = self._route
        _active["graph"] = None
        if self._allocator is not None:
            self._allocator.__exit__(None, None, None)
            self._allocator = None
        self._increment = self._rng.end() if self._rng is not None else 0
        stream, self._stream = self._stream, None
        return stream

    def capture_end(self):
        """End the capture begun by :meth:`capture_begin`."""
        if self._stream is None:
            raise RuntimeError("CUDAGraph.capture_end() called without capture_begin()")
        stream = self._stream
        try:
            graph = stream.end_capture()
        finally:
            self._finish_capture()
        self._graph = graph

    def replay(self):
        """Launch the captured work (on the current stream)."""
        if self._graph is None:
            raise RuntimeError("CUDAGraph.replay() needs a captured graph: capture it first (with "
                               "gputorch.cuda.graph(g) or capture_begin/capture_end); reset() discards it")
        cp = self._cp
        with cp.cuda.Device(self._device_index):
            if self._increment:
                self._rng.before_replay(self._increment)
            self._graph.launch(stream=cp.cuda.get_current_stream())

    def reset(self):
        """Discard the graph and give up its memory pool (the tensors made during capture must not
        be used afterwards)."""
        self._graph = None
        self._pool = None
        self._rng = None
        self._increment = 0

    def pool(self):
        """The handle of this graph's memory pool, to share it with another capture."""
        if self._pool is None:
            raise RuntimeError("CUDAGraph.pool(): the graph has no pool (it was not captured, or was reset)")
        return self._pool

    def enable_debug_mode(self):
        pass

    def debug_dump(self, debug_path):
        """Write the captured graph in Graphviz dot form to ``debug_path``."""
        if self._graph is None:
            raise RuntimeError("CUDAGraph.debug_dump(): nothing captured")
        text = self._graph.debug_dot_str()
        with open(debug_path, "w") as f:
            f.write(text if isinstance(text, str) else text.decode())


class graph:
    """``with gputorch.cuda.graph(g):`` captures the block into the CUDAGraph ``g``.

    Like PyTorch's: synchronises the device, collects garbage and empties the cache first, then
    captures on ``stream`` (default: one side stream shared by every ``graph``), ending the capture
    when the block exits. ``pool`` shares memory with other graphs (:func:`graph_pool_handle`).
    """

    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        from .. import _streams
        if not isinstance(cuda_graph, CUDAGraph):
            raise TypeError(f"graph() expects a gputorch.cuda.CUDAGraph, got {type(cuda_graph).__name__}")
        if stream is None:
            if graph.default_capture_stream is None:
                graph.default_capture_stream = _streams.Stream("cuda")
            stream = graph.default_capture_stream
        self.cuda_graph = cuda_graph
        self.pool = pool
        self.capture_stream = stream
        self.capture_error_mode = capture_error_mode

    def __enter__(self):
        from . import empty_cache, synchronize
        synchronize()
        gc.collect()
        empty_cache()
        self.capture_stream.__enter__()
        try:
            self.cuda_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self.capture_stream.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self.cuda_graph.capture_end()
        except Exception:
            if exc_type is None:
                raise     # otherwise the block's own error says more than "capture invalidated"
        finally:
            self.capture_stream.__exit__(None, None, None)
        return False


# ---------------------------------------------------------------- make_graphed_callables
def _flat_tensors(obj, what):
    from .._tensor import Tensor
    if isinstance(obj, Tensor):
        return (obj,)
    if isinstance(obj, (tuple, list)):
        out = ()
        for x in obj:
            out += _flat_tensors(x, what)
        return out
    raise TypeError(f"make_graphed_callables: {what} may contain only tensors (and tuples/lists of them), "
                    f"got {type(obj).__name__}")


def _unflatten(template, flat):
    """``flat`` tensors in the nesting of ``template``; returns (value, number used)."""
    from .._tensor import Tensor
    if isinstance(template, Tensor):
        return flat[0], 1
    used, items = 0, []
    for t in template:
        value, n = _unflatten(t, flat[used:])
        items.append(value)
        used += n
    return type(template)(items), used


def _is_module(obj):
    """Whether ``obj`` is an ``nn.Module`` (told by its interface: this layer does not import nn)."""
    return all(hasattr(obj, name) for name in ("parameters", "modules", "training", "forward"))


def _graph_one(func, args, params, warmup, allow_unused, pool):
    from .. import autograd
    from ..ops.creation import empty_like, ones_like
    inputs = _flat_tensors(args, "sample_args") + tuple(params)
    for i, t in enumerate(inputs):
        if not t.is_cuda:
            raise RuntimeError(f"make_graphed_callables: input {i} (shape {tuple(t.shape)}) is on {t.device}; "
                               f"CUDA graphs capture CUDA tensors only")
    needs_grad = [t for t in inputs if t.requires_grad]

    def grads_of(outputs, grad_outputs):
        outs = [o for o in outputs if o.requires_grad]
        if not outs or not needs_grad:
            return ()
        return autograd.grad(outs, needs_grad, grad_outputs=[g for o, g in zip(outputs, grad_outputs)
                                                             if o.requires_grad],
                             only_inputs=True, allow_unused=allow_unused)

    side = graph.default_capture_stream
    if side is None:
        from .. import _streams
        side = graph.default_capture_stream = _streams.Stream("cuda")
    with side:
        for _ in range(warmup):
            outputs = _flat_tensors(func(*args), "outputs")
            grads_of(outputs, [ones_like(o) if o.requires_grad else None for o in outputs])
            del outputs
    fwd, bwd = CUDAGraph(), CUDAGraph()
    with graph(fwd, pool=pool):
        raw = func(*args)
    static_outputs = _flat_tensors(raw, "outputs")
    static_grad_outputs = [empty_like(o) if o.requires_grad else None for o in static_outputs]
    with graph(bwd, pool=fwd.pool()):
        grads = grads_of(static_outputs, static_grad_outputs)
    grads = iter(grads)
    static_grad_inputs = [next(grads) if t.requires_grad else None for t in inputs]
    return _Graphed(fwd, bwd, inputs, raw, static_outputs, static_grad_outputs, static_grad_inputs)


class _Graphed:
    """The two graphs of one callable and their static tensors."""

    def __init__(self, fwd, bwd, inputs, raw, outputs, grad_outputs, grad_inputs):
        self.fwd, self.bwd = fwd, bwd
        self.inputs, self.raw, self.outputs = inputs, raw, outputs
        self.grad_outputs, self.grad_inputs = grad_outputs, grad_inputs
        self.function = self._autograd_function()

    def _autograd_function(self):
        from ..autograd import Function
        me = self

        class Graphed(Function):
            @staticmethod
            def forward(ctx, *values):
                for static, value in zip(me.inputs, values):
                    if value.data_ptr() != static.data_ptr():
                        static.detach().copy_(value.detach())
                me.fwd.replay()
                return tuple(o.detach() for o in me.outputs)

            @staticmethod
            def backward(ctx, *grads):
                for static, g in zip(me.grad_outputs, grads):
                    if static is not None and g is not None and g.data_ptr() != static.data_ptr():
                        static.copy_(g)
                me.bwd.replay()
                return tuple(None if g is None else g.detach() for g in me.grad_inputs)

        return Graphed

    def __call__(self, n_user, *user_args):
        flat = _flat_tensors(user_args, "arguments")
        if len(flat) != n_user:
            raise RuntimeError(f"a graphed callable takes the tensors it was captured with: {n_user} expected, "
                               f"got {len(flat)}")
        for static, value in zip(self.inputs, flat):
            if (tuple(value.shape), value.dtype, value.device) != (tuple(static.shape), static.dtype, static.device):
                raise RuntimeError(f"a graphed callable's inputs must match its sample inputs: got shape "
                                   f"{tuple(value.shape)}, {value.dtype} on {value.device}, captured with shape "
                                   f"{tuple(static.shape)}, {static.dtype} on {static.device}")
        outputs = self.function.apply(*flat, *self.inputs[n_user:])
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        value, _ = _unflatten(self.raw, outputs)
        return value


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None):
    """Graphed versions of ``callables`` (a module or function, or a tuple of them): each call
    replays a forward graph, and backward replays a backward graph (``torch.cuda.make_graphed_callables``).

    ``sample_args`` are the callables' tensor arguments (a tuple, or a tuple of tuples for a tuple
    of callables); later calls must pass tensors of the same shapes, dtypes and devices. A module
    gets its ``forward`` replaced by the graphed one while it is in training mode (in eval mode
    its original forward runs) and is returned itself; its parameters get their gradients by
    ordinary autograd. Modules must have no hooks.
    """
    single = not isinstance(callables, tuple)
    if single:
        callables, sample_args = (callables,), (sample_args,)
    if len(callables) != len(sample_args):
        raise ValueError("make_graphed_callables: one tuple of sample args per callable is needed")
    shared_pool = pool if pool is not None else graph_pool_handle()
    results = []
    for func, args in zip(callables, sample_args):
        args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
        params = ()
        if _is_module(func):
            hooks = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks")
            if any(getattr(m, h, None) for m in func.modules() for h in hooks):
                raise RuntimeError("make_graphed_callables: modules must have no registered hooks")
            params = tuple(p for p in func.parameters() if p.requires_grad)
        n_user = len(_flat_tensors(args, "sample_args"))
        graphed = _graph_one(func, args, params, num_warmup_iters, allow_unused_input, shared_pool)

        def run(*user_args, _g=graphed, _n=n_user):
            return _g(_n, *user_args)

        if _is_module(func):
            original = func.forward

            def forward(*user_args, _run=run, _module=func, _original=original):
                return _run(*user_args) if _module.training else _original(*user_args)
            func.forward = forward
            results.append(func)
        else:
            results.append(run)
    return results[0] if single else tuple(results)
