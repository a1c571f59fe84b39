"""Activation checkpointing: trade compute for memory.

``checkpoint(fn, *args)`` runs ``fn`` without keeping the tensors its ops save for backward;
backward runs ``fn`` again (the *recomputation*) to get them. Only the inputs are kept. The
random state of the CPU generator and of every CUDA device's default generator that exists
(plus the devices of the tensor inputs) is saved before the forward and restored for the
recomputation, so random ops (dropout) draw the same numbers and gradients are identical to
those of the run without checkpointing.

Two implementations, as in PyTorch:

- ``use_reentrant=False`` (recommended): the forward runs under ``saved_tensors_hooks`` whose
  pack hook keeps a small handle instead of the tensor. The first unpack in backward re-runs
  ``fn`` under a hook that collects the tensors saved by the recomputation, in order, and
  hands each to its handle (recomputation stops once every needed tensor is back, and the
  shapes/dtypes/devices are checked against the forward's). Works with ``autograd.grad``,
  keyword arguments, nested checkpoints and double backward.
- ``use_reentrant=True``: a custom autograd Function that runs ``fn`` under ``no_grad`` and, in
  its backward, re-runs it with grad enabled and calls ``autograd.backward`` inside backward.

Like PyTorch 2.x, omitting ``use_reentrant`` warns and uses the reentrant variant.
"""
import contextlib
import warnings
import weakref

from .. import random as _random
from .._tensor import Tensor
from ..amp.autocast_mode import restored as autocast_restored, snapshot as autocast_snapshot
from ..autograd import grad_mode
from ..autograd.engine import backward as _autograd_backward
from ..autograd.function import Function
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "noop_context_fn",
           "get_device_states", "set_device_states"]

_GRAD_ENABLED = grad_mode.GRAD_ENABLED


class CheckpointError(RuntimeError):
    """The recomputation did not reproduce the forward (different saved tensors)."""


def noop_context_fn():
    """The default ``context_fn``: no extra context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


# -- random state ------------------------------------------------------------------------------------
def get_device_states(*args):
    """The CUDA devices of the tensors in ``args`` and the states of their default generators."""
    devices = []
    for a in args:
        if isinstance(a, Tensor) and a.device.type == "cuda" and a.device not in devices:
            devices.append(a.device)
    return devices, [_random.default_generator_for(d).get_state() for d in devices]


def set_device_states(devices, states):
    for d, state in zip(devices, states):
        _random.default_generator_for(d).set_state(state)


class _RNGState:
    """The CPU generator's state and that of every CUDA default generator that may be touched:
    the devices of the tensor arguments and every device whose generator already exists. A device
    generator first created inside the checkpointed function starts the recomputation fresh again
    (seeded as it was when it was created)."""

    def __init__(self, args):
        devices, _ = get_device_states(*args)
        for d in list(_random._device_generators):
            if d not in devices:
                devices.append(d)
        self.known = set(devices)
        self.seed_for_new = _random._seed_for_new[0]
        self.generators = [_random.default_generator] + [_random.default_generator_for(d) for d in devices]
        self.states = [g.get_state() for g in self.generators]

    def _fresh_state(self, device):
        g = _random.Generator(device)
        if self.seed_for_new is not None:
            g.manual_seed(self.seed_for_new)
        return g.get_state()

    @contextlib.contextmanager
    def restored(self):
        """Run the block from the saved states; the generators continue where they were afterwards."""
        generators, states = list(self.generators), list(self.states)
        for d, g in list(_random._device_generators.items()):
            if d not in self.known:           # created during the forward
                generators.append(g)
                states.append(self._fresh_state(d))
        current = [g.get_state() for g in generators]
        for g, state in zip(generators, states):
            g.set_state(state)
        try:
            yield
        finally:
            for g, state in zip(generators, current):
                g.set_state(state)


def _rng_context(rng):
    return rng.restored() if rng is not None else contextlib.nullcontext()


@contextlib.contextmanager
def _grad_enabled(mode):
    prev = _GRAD_ENABLED.value
    _GRAD_ENABLED.value = mode
    try:
        yield
    finally:
        _GRAD_ENABLED.value = prev


# -- public API ------------------------------------------------------------------------------------
_REENTRANT_WARNING = (
    "gputorch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. use_reentrant=False "
    "is recommended, but if you need to preserve the current default behavior, you can pass "
    "use_reentrant=True. Refer to docs for more details on the differences between the two variants.")


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, preserve_rng_state=True, **kwargs):
    """Run ``function(*args, **kwargs)`` without storing its intermediate activations.

    Args:
        function: what to run (a module or any callable of tensors).
        use_reentrant (bool): False for the saved-tensor-hooks implementation (recommended);
            True for the reentrant autograd Function. Omitted: a warning, and True (PyTorch's default).
        context_fn: returns two context managers, entered around the forward and around the
            recomputation (non-reentrant only).
        determinism_check (str): "default" checks that the recomputation saves tensors of the same
            shapes, dtypes and devices as the forward (raising :class:`CheckpointError`); "none" does not.
        debug (bool): accepted for compatibility (non-reentrant only); no extra output.
        early_stop (bool): stop the recomputation as soon as every needed tensor is recomputed.
        preserve_rng_state (bool): restore the random state for the recomputation (default True).
        **kwargs: keyword arguments for ``function`` (non-reentrant only).

    Returns:
        what ``function`` returns.
    """
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if _GRAD_ENABLED.value and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
        return _ReentrantCheckpoint.apply(function, preserve_rng_state, *args)
    return _checkpoint_with_hooks(function, args, kwargs, preserve_rng_state, context_fn,
                                  determinism_check == "default", early_stop)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a sequence of modules/functions in ``segments`` chunks, checkpointing all but the last.

    ``functions`` is an ``nn.Sequential`` or a list of callables applied one after another to
    ``input``. Each of the first ``segments - 1`` chunks of ``len(functions) // segments``
    functions is checkpointed; the rest runs normally (its activations are needed at once).
    ``preserve_rng_state`` may be passed as a keyword.
    """
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING.replace("checkpoint:", "checkpoint.checkpoint_sequential:"),
                      stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn.modules.container import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    else:
        functions = list(functions)

    def run_range(start, end):
        def forward(x):
            for fn in functions[start:end]:
                x = fn(x)
            return x
        return forward

    size = len(functions) // segments
    start = 0
    for _ in range(segments - 1):
        input = checkpoint(run_range(start, start + size), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
        start += size
    return run_range(start, len(functions))(input)


# -- reentrant variant -------------------------------------------------------------------------------
class _ReentrantCheckpoint(Function):
    """Forward under no_grad keeping only the inputs; backward recomputes and backpropagates."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng = _RNGState(args) if preserve_rng_state else None
        ctx.autocast = autocast_snapshot()
        ctx.arg_template = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        args = list(ctx.arg_template)
        for i, t in zip(ctx.tensor_positions, ctx.saved_values):
            detached = t.detach()
            detached._requires_grad = t.requires_grad
            args[i] = detached
        with _rng_context(ctx.rng), _grad_enabled(True), autocast_restored(ctx.autocast):
            outputs = ctx.run_function(*args)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        roots, grads = [], []
        for out, g in zip(outputs, grad_outputs):
            if isinstance(out, Tensor) and out.requires_grad:
                roots.append(out)
                grads.append(g)
        if not roots:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _autograd_backward(roots, grads)
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in args)


# -- non-reentrant variant ---------------------------------------------------------------------------
class _SaveInputs(Function):
    """A no-op whose node keeps the checkpoint's tensor inputs (version-checked, and through the
    saved-tensor hooks active outside the checkpoint)."""

    @staticmethod
    def forward(ctx, anchor, *tensors):
        ctx.save_for_backward(*tensors)
        return anchor.detach()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("internal checkpoint node: it is never part of a backward pass")


class _StopRecomputation(BaseException):
    """Raised by the recomputation's pack hook once everything needed is back (early stop)."""


class _Handle:
    """What a checkpointed forward saves in place of a tensor: the position of that tensor among
    the tensors the forward saved."""

    __slots__ = ("index", "__weakref__")

    def __init__(self, index):
        self.index = index


class _Frame:
    """The state of one checkpointed call: how to rerun it and what it saved."""

    def __init__(self, function, args, kwargs, rng, check, early_stop, recompute_context):
        from ..ops.creation import empty
        self.function = function
        self.rng = rng
        self.check = check
        self.early_stop = early_stop
        self.recompute_context = recompute_context
        self.autocast = autocast_snapshot()   # the recomputation runs under the forward's autocast regions
        self.handles = []        # weakrefs to the handles, in save order
        self.metadata = []       # (shape, dtype, device) of each saved tensor, for the determinism check
        self.recomputed = {}     # handle index -> recomputed tensor, until unpacked
        self.positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.kw_names = [k for k, v in kwargs.items() if isinstance(v, Tensor)]
        self.template = [None if isinstance(a, Tensor) else a for a in args]
        self.kw_template = {k: v for k, v in kwargs.items() if not isinstance(v, Tensor)}
        tensors = [args[i] for i in self.positions] + [kwargs[k] for k in self.kw_names]
        anchor = empty(0, requires_grad=True)
        with _grad_enabled(True):
            self.saver = _SaveInputs.apply(anchor, *tensors).grad_fn

    # saved-tensor hooks of the forward
    def pack(self, tensor):
        handle = _Handle(len(self.handles))
        self.handles.append(weakref.ref(handle))
        self.metadata.append((tuple(tensor.shape), tensor.dtype, tensor.device))
        return handle

    def unpack(self, handle):
        index = handle.index
        if index not in self.recomputed:
            self.recompute()
        return self.recomputed.pop(index)

    def _inputs(self):
        args = list(self.template)
        kwargs = dict(self.kw_template)
        saved = self.saver.saved_values
        for slot, t in zip(self.positions + self.kw_names, saved):
            detached = t.detach()
            detached._requires_grad = t.requires_grad
            if isinstance(slot, int):
                args[slot] = detached
            else:
                kwargs[slot] = detached
        return args, kwargs

    def recompute(self):
        """Rerun the function, collecting the tensors it saves for the handles still alive."""
        needed = {i for i, ref in enumerate(self.handles) if ref() is not None}
        missing = needed - set(self.recomputed)
        count = [0]
        total = len(self.handles)

        def collect(tensor):
            i = count[0]
            count[0] += 1
            if i < total:
                if self.check and self.metadata[i] != (tuple(tensor.shape), tensor.dtype, tensor.device):
                    raise CheckpointError(_metadata_mismatch(i, self.metadata[i], tensor))
                if i in missing:
                    self.recomputed[i] = tensor.detach()
                    missing.discard(i)
                    if not missing and self.early_stop:
                        raise _StopRecomputation
            return None

        def never(_):
            raise RuntimeError("tensors saved during a checkpoint recomputation are not unpacked")

        args, kwargs = self._inputs()
        try:
            with _rng_context(self.rng), _grad_enabled(True), self.recompute_context, \
                    autocast_restored(self.autocast), saved_tensors_hooks(collect, never):
                self.function(*args, **kwargs)
        except _StopRecomputation:
            return
        if missing:
            raise CheckpointError(
                "gputorch.utils.checkpoint: A different number of tensors was saved during the original "
                f"forward and recomputation.\nNumber of tensors saved during forward: {total}\n"
                f"Number of tensors saved during recomputation: {count[0]}")


def _metadata_mismatch(index, expected, tensor):
    shape, dtype, device = expected
    return ("gputorch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
            f"than during the forward pass.\ntensor at position {index}:\n"
            f"saved metadata: {{'shape': {list(shape)}, 'dtype': {dtype}, 'device': {device}}}\n"
            f"recomputed metadata: {{'shape': {list(tensor.shape)}, 'dtype': {tensor.dtype}, "
            f"'device': {tensor.device}}}")


def _checkpoint_with_hooks(function, args, kwargs, preserve_rng_state, context_fn, check, early_stop):
    forward_context, recompute_context = context_fn()
    if not _GRAD_ENABLED.value:
        with forward_context:
            return function(*args, **kwargs)   # nothing is saved without a graph
    rng = _RNGState(args) if preserve_rng_state else None
    frame = _Frame(function, args, kwargs, rng, check, early_stop, recompute_context)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return function(*args, **kwargs)
