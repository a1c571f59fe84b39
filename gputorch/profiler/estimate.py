"""``estimate_memory``: the memory of a training step, predicted before running it.

::

    report = estimate_memory(model, x, target=y, optimizer=opt, loss_fn=F.cross_entropy)
    report.peak_bytes, report.peak, report.peak_phase, report.by_module
    report = estimate_memory(model, x, target=y, optimizer=opt, loss_fn=F.cross_entropy,
                             checkpoint=["layer1", "encoder.layers.0"])
    report.peak_bytes_without_checkpoint, report.peak_bytes, report.checkpoint_saving

The step is replayed on the shape-only ``meta`` device: a replica of the model whose parameters
and buffers are meta tensors (the user's model is not touched and nothing is copied), an
optimizer of the same class and hyperparameters over the replica, and meta copies of the
inputs. Every op computes only the shapes, dtypes and layouts of its results, and the same
code runs as on a real device (the same tensors are made, saved for backward and freed at
the same moments), so the :class:`~gputorch.profiler.MemoryProfiler` watching the replay sees
the bytes a real step would use, category by category. Tensors that ops make on the CPU
whatever the device (the optimizers' step counters) are counted too, as on a real run.

The numbers are those of clean data: where an op tests values (an index out of range, a NaN
window), the meta device takes the common, clean path (see ``gputorch/backends/meta_array.py``).
The replay runs the forwards that the model's device runs: the generic op implementations for a
model on the CPU (the replay reproduces a CPU step byte for byte), the CUDA backend's kernel
forwards, shape-only, for a model on a GPU (``backends/meta_imitation.py``), so that the replay
makes the tensors the fused kernels make rather than those of the generic ops. Real tensors that
the loss closes over (a target, class weights) take part as meta tensors of their shape. Model or
loss code that reads values (``loss.item()``, ``if x.max() > 1``) cannot run on the meta device
and raises.
"""
import contextlib
import copy
import gc
import inspect
import itertools

from .._device import device as Device
from .._tensor import Tensor
from ..backends.meta_mixing import real_tensors_as_meta
from ..backends.meta_imitation import imitating
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ..ops.creation import empty
from ..optim.optimizer import Optimizer
from .profiler import MemoryProfiler
from .report import MemoryReport
from ._format import format_bytes

__all__ = ["estimate_memory", "MemoryEstimate"]

_META = Device("meta")


class MemoryEstimate(MemoryReport):
    """A :class:`MemoryReport` of a replayed step, plus what the replay was and its what-if.

    Extra attributes:
        estimated_steps (int): training steps replayed.
        checkpointed (list of str): the module paths whose forwards were checkpointed in this replay.
        baseline (MemoryReport): the replay without checkpointing (this report itself when
            ``checkpointed`` is empty).
        peak_bytes_without_checkpoint, peak_bytes_with_checkpoint (int or None): the predicted peak
            without / with checkpointing (the latter None without a what-if).
        checkpoint_saving (int): how much lower the peak is with checkpointing (0 without a what-if).
        autocast (dtype or None): the autocast dtype of the replay.
        activations_without_autocast, activations_with_autocast (int or None): the highest activation
            bytes of a float32 replay and of the autocast replay (None without ``autocast``).
        autocast_saving (int): how much lower the activations' high point is under autocast (negative
            where the half-precision weight copies saved for backward outweigh the smaller
            activations, as with small batches; 0 without ``autocast``).
    """

    @classmethod
    def _from(cls, report, steps, checkpointed, baseline, autocast=None, float32=None):
        est = cls.__new__(cls)
        est.__dict__.update(report.__dict__)
        est.estimated_steps = steps
        est.checkpointed = list(checkpointed)
        est.baseline = baseline if checkpointed else est
        est.peak_bytes_without_checkpoint = est.baseline.peak_bytes
        est.peak_bytes_with_checkpoint = report.peak_bytes if checkpointed else None
        est.checkpoint_saving = est.baseline.peak_bytes - report.peak_bytes if checkpointed else 0
        est.autocast = autocast
        base_act = est.baseline.category_peaks["activations"]
        est.activations_with_autocast = base_act if autocast is not None else None
        est.activations_without_autocast = float32.category_peaks["activations"] if float32 is not None else None
        est.autocast_saving = float32.category_peaks["activations"] - base_act if float32 is not None else 0
        return est

    def to_dict(self):
        d = super().to_dict()
        d["estimate"] = {"steps": self.estimated_steps, "checkpointed": self.checkpointed,
                         "peak_bytes_without_checkpoint": self.peak_bytes_without_checkpoint,
                         "peak_bytes_with_checkpoint": self.peak_bytes_with_checkpoint,
                         "checkpoint_saving": self.checkpoint_saving,
                         "autocast": None if self.autocast is None else str(self.autocast),
                         "activations_without_autocast": self.activations_without_autocast,
                         "activations_with_autocast": self.activations_with_autocast,
                         "autocast_saving": self.autocast_saving}
        return d

    def __str__(self):
        head = [f"Estimated on the meta device ({self.estimated_steps} training step(s) replayed, no memory "
                "allocated)."]
        if self.checkpointed:
            base = self.baseline
            head.append(f"What-if: checkpointing {', '.join(repr(p) for p in self.checkpointed)} changes the "
                        f"peak from {format_bytes(base.peak_bytes)} to {format_bytes(self.peak_bytes)} "
                        f"(saves {format_bytes(self.checkpoint_saving)}; activations at the peak "
                        f"{format_bytes(base.peak['activations'])} -> {format_bytes(self.peak['activations'])}).")
        if self.autocast is not None:
            head.append(f"What-if: autocast to {self.autocast} changes the activations' high point from "
                        f"{format_bytes(self.activations_without_autocast)} (float32) to "
                        f"{format_bytes(self.activations_with_autocast)} (saves {format_bytes(self.autocast_saving)}).")
        return "\n".join(head) + "\n\n" + super().__str__()

    def __repr__(self):
        extra = f", checkpointed={self.checkpointed}, saving={self.checkpoint_saving} B" if self.checkpointed else ""
        return f"<MemoryEstimate peak={self.peak_bytes} B ({self.peak_phase}){extra}>"


def estimate_memory(model, example_inputs, optimizer=None, loss_fn=None, *, target=None, checkpoint=None,
                    steps=1, autocast=None):
    """Predict the memory of training steps of ``model`` without running them.

    Args:
        model (nn.Module): the model (on any device; it is not modified).
        example_inputs: the model's input: a Tensor, a tuple/list of positional arguments, or a dict
            of keyword arguments. Tensors may be real (only their shapes and dtypes are used) or
            already on the meta device.
        optimizer: an :class:`~gputorch.optim.Optimizer` over ``model``'s parameters (its class,
            param groups and hyperparameters are replicated, and its current state, if any), or a
            callable ``params -> Optimizer``; None for forward and backward only.
        loss_fn: ``loss_fn(output, target)`` (``loss_fn(output)`` when ``target`` is None) giving the
            scalar loss; default: the sum of the floating-point outputs.
        target: the target passed to ``loss_fn`` (tensors as for ``example_inputs``).
        checkpoint (list of str): module paths (as in ``model.named_modules()``) whose forwards to
            run under :func:`gputorch.utils.checkpoint.checkpoint`: the step is replayed with and
            without, and the report gives the peak of both.
        steps (int): training steps to replay (the peak of the first step has no optimizer state
            yet when the optimizer is fresh; 2 steps show the steady state).
        autocast (dtype, optional): replay the forward and the loss as they would run under
            ``gputorch.autocast(<the model's device type>, dtype=autocast)`` (``gputorch.float16``,
            or ``gputorch.bfloat16`` for a CPU model), and also without it: ``autocast_saving``
            predicts what mixed precision saves on the activations.

    Returns:
        MemoryEstimate: a :class:`MemoryReport` (``peak_bytes``, ``peak``, ``peak_phase``,
        ``by_module``, ...) of the replay, with the what-if figures.
    """
    if not isinstance(model, Module):
        raise TypeError(f"estimate_memory(): model must be an nn.Module, not {type(model).__name__}")
    if int(steps) < 1:
        raise ValueError(f"estimate_memory(): steps must be at least 1, got {steps}")
    paths = [] if checkpoint is None else [checkpoint] if isinstance(checkpoint, str) else list(checkpoint)
    known = dict(model.named_modules())
    for p in paths:
        if not isinstance(p, str) or p not in known:
            raise ValueError(f"estimate_memory(): checkpoint={p!r} is not a module of the model (module paths "
                             f"are those of model.named_modules(), e.g. {sorted(known)[1:4]})")
    region = float32 = None
    if autocast is not None:
        region = (_model_device_type(model), autocast)
        float32 = _replay(model, example_inputs, optimizer, loss_fn, target, [], int(steps))
    baseline = _replay(model, example_inputs, optimizer, loss_fn, target, [], int(steps), region)
    with_ckpt = _replay(model, example_inputs, optimizer, loss_fn, target, paths, int(steps), region) \
        if paths else None
    # The finished profiler and the replica refer to each other: collect them now rather than let
    # a meta model linger until the next garbage collection.
    gc.collect()
    if not paths:
        return MemoryEstimate._from(baseline, int(steps), [], None, autocast, float32)
    return MemoryEstimate._from(with_ckpt, int(steps), paths, baseline, autocast, float32)


# ---------------------------------------------------------------- the replay
def _replay(model, example_inputs, optimizer, loss_fn, target, checkpointed, steps, region=None):
    replica, tensor_map = _meta_replica(model)
    for path in checkpointed:
        _checkpoint_forward(replica.get_submodule(path))
    opt = _meta_optimizer(optimizer, replica, tensor_map)
    prof = MemoryProfiler(replica, opt, device=["meta", "cpu"], scan_existing=False, check_leaks=False)
    with imitating(_model_backend(model)), real_tensors_as_meta(), prof:
        args, kwargs = _as_arguments(_to_meta(example_inputs))
        tgt = _to_meta(target)
        for _ in range(steps):
            with _forward_region(region):
                output = replica(*args, **kwargs)
                loss = _loss(loss_fn, output, tgt)
            del output
            loss.backward()
            del loss
            if opt is not None:
                opt.step()
                opt.zero_grad()
            else:
                replica.zero_grad()
        del args, kwargs, tgt
    return prof.report()


def _forward_region(region):
    """The autocast region the replayed forward runs in (``(device type, dtype)``), or none."""
    if region is None:
        return contextlib.nullcontext()
    from ..amp.autocast_mode import imitated_region
    return imitated_region(*region)


def _model_device_type(model):
    for t in itertools.chain(model.parameters(), model.buffers()):
        return t.device.type
    return "cpu"


def _model_backend(model):
    """The backend of the device that ``model``'s first parameter (or buffer) is on: the one whose
    specialised forwards the replay runs (the CPU backend, and the meta device, have none)."""
    for t in itertools.chain(model.parameters(), model.buffers()):
        return t.device.backend
    return _META.backend


def _to_meta(obj):
    """New meta tensors with the shapes and dtypes of the tensors in ``obj`` (also inside lists,
    tuples and dicts); anything else unchanged. Made from nothing, so that the profiler sees one
    new meta storage per input and no alias of the original."""
    if isinstance(obj, Tensor):
        t = empty(obj.shape, dtype=obj.dtype, device=_META)
        return t.requires_grad_(True) if obj.requires_grad else t
    if isinstance(obj, (list, tuple)):
        items = [_to_meta(x) for x in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if isinstance(obj, dict):
        return type(obj)((k, _to_meta(v)) for k, v in obj.items())
    return obj


def _as_arguments(inputs):
    if isinstance(inputs, dict):
        return (), inputs
    if isinstance(inputs, (list, tuple)) and not hasattr(inputs, "_fields"):
        return tuple(inputs), {}
    return (inputs,), {}


def _float_tensors(obj):
    if isinstance(obj, Tensor):
        return [obj] if obj.is_floating_point() and obj.requires_grad else []
    if isinstance(obj, (list, tuple)):
        return [t for x in obj for t in _float_tensors(x)]
    if isinstance(obj, dict):
        return [t for x in obj.values() for t in _float_tensors(x)]
    return []


def _loss(loss_fn, output, target):
    if loss_fn is not None:
        loss = loss_fn(output) if target is None else loss_fn(output, target)
    else:
        parts = _float_tensors(output)
        if not parts:
            raise RuntimeError("estimate_memory(): the model's output has no floating-point tensor that requires "
                               "grad; pass loss_fn")
        loss = parts[0].sum()
        for t in parts[1:]:
            loss = loss + t.sum()
    if not isinstance(loss, Tensor) or loss.numel() != 1:
        raise RuntimeError("estimate_memory(): loss_fn must return a one-element tensor (the loss), got "
                           f"{type(loss).__name__ if not isinstance(loss, Tensor) else list(loss.shape)}")
    return loss


# ---------------------------------------------------------------- the replica
def _meta_tensor(t):
    """A meta tensor like ``t`` (a Parameter stays a Parameter of the same class)."""
    data = t.detach().to(_META)
    if isinstance(t, Parameter):
        return type(t)(data, requires_grad=t.requires_grad)
    return data.requires_grad_(t.requires_grad) if t.is_floating_point() else data


def _meta_replica(model):
    """A deep copy of ``model`` whose tensors are meta tensors (no data copied), and the map
    ``id(original tensor) -> meta tensor``."""
    memo = {}
    tensor_map = {}
    tensors = itertools.chain(model.parameters(), model.buffers(),
                              (v for m in model.modules() for v in vars(m).values() if isinstance(v, Tensor)))
    for t in tensors:
        if id(t) in memo:
            continue
        meta = _meta_tensor(t)
        if t.grad is not None and isinstance(t, Parameter):
            meta.grad = t.grad.detach().to(_META)
        memo[id(t)] = tensor_map[id(t)] = meta
    return copy.deepcopy(model, memo), tensor_map


def _checkpoint_forward(module):
    """Run ``module``'s forward under activation checkpointing (as wrapping its call would)."""
    from ..utils.checkpoint import checkpoint
    forward = module.forward

    def checkpointed_forward(*args, **kwargs):
        return checkpoint(forward, *args, use_reentrant=False, **kwargs)
    object.__setattr__(module, "forward", checkpointed_forward)


def _meta_optimizer(optimizer, replica, tensor_map):
    """An optimizer of ``optimizer``'s class, param groups, hyperparameters and state over the replica."""
    if optimizer is None:
        return None
    if not isinstance(optimizer, Optimizer):
        if callable(optimizer):
            return optimizer(replica.parameters())
        raise TypeError("estimate_memory(): optimizer must be an Optimizer or a callable params -> Optimizer, "
                        f"not {type(optimizer).__name__}")

    def meta_param(p):
        m = tensor_map.get(id(p))
        if m is None:       # optimized but not part of the model
            m = tensor_map[id(p)] = _meta_tensor(p)
        return m

    groups = []
    for group in optimizer.param_groups:
        g = {k: v for k, v in group.items() if k != "params"}
        g["params"] = [meta_param(p) for p in group["params"]]
        groups.append(g)
    cls = type(optimizer)
    defaults = dict(optimizer.defaults)
    try:
        opt = cls(groups, **defaults)
    except TypeError:       # defaults holding entries the constructor does not take
        accepted = inspect.signature(cls).parameters
        opt = cls(groups, **{k: v for k, v in defaults.items() if k in accepted})
    for p, state in optimizer.state.items():
        m = tensor_map.get(id(p))
        if m is None or not isinstance(state, dict):
            continue
        opt.state[m] = {k: _state_value(v, p) for k, v in state.items()}
    return opt


def _state_value(value, param):
    """Optimizer state on the meta device, except what lives apart from the parameter (the CPU step
    counters), which is cloned as it is."""
    if not isinstance(value, Tensor):
        return copy.deepcopy(value)
    if value.device == param.device and (value.dim() > 0 or param.dim() == 0):
        return value.detach().to(_META)
    return value.detach().clone()
