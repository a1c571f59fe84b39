"""GradScaler: loss scaling for float16 training, with PyTorch's dynamic scale.

``scaler.scale(loss).backward()`` multiplies the loss by the scale (2**16 at first) so that small
float16 gradients do not flush to zero; ``scaler.step(optimizer)`` divides the gradients by the
scale (``unscale_``, unless done already), checks them for inf/NaN and runs ``optimizer.step()``
only when all are finite; ``scaler.update()`` halves the scale after a step with inf/NaN (and
skips it) and doubles it after ``growth_interval`` finite steps in a row.

The scale and the growth counter stay on the device of the first scaled output; the only host
synchronisation per step is the one PyTorch has, reading whether an inf/NaN was found before
stepping.
"""
import enum
import warnings

from .. import _dtype

__all__ = ["GradScaler", "OptState", "non_finite_check_and_unscale"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def non_finite_check_and_unscale(xp, arrays, found_inf, inv_scale):
    """Set ``found_inf`` (a 0-d float32 array) to 1 when one of ``arrays`` (gradients on one device)
    holds an inf or a NaN, and multiply each array in place by ``inv_scale`` (a 0-d float32 array)
    cast to its dtype; no host synchronisation. The CUDA backend replaces this with one kernel
    launch per dtype (``kernels/amp.cu``), PyTorch's ``_amp_foreach_non_finite_check_and_unscale_``."""
    for a in arrays:
        if not a.size:
            continue
        bad = (~xp.isfinite(a)).any().astype(found_inf.dtype)
        xp.maximum(found_inf, bad, out=found_inf)
        xp.multiply(a, inv_scale.astype(a.dtype), out=a)


def _fresh_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``; see the module docstring."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                              UserWarning, stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._scale = None
        self._growth_tracker = None
        self._per_optimizer_states = {}

    # ------------------------------------------------------------------ scaling
    def _lazy_init(self, device):
        from .. import full
        self._scale = full((), self._init_scale, dtype=_dtype.float32, device=device)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=_dtype.int32, device=device)

    def scale(self, outputs):
        """``outputs`` (a tensor, or nested lists/tuples of tensors) times the current scale."""
        if not self._enabled:
            return outputs
        from .._tensor import Tensor
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(outputs.device)
        if isinstance(outputs, (list, tuple)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, list) else tuple(scaled)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _check_scale_growth_tracker(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate your script did not "
                                 "use scaler.scale(loss or outputs) earlier in the iteration.")

    def _state(self, optimizer):
        return self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())

    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        """Multiply every gradient of ``optimizer`` by ``inv_scale`` in place; ``{device: found_inf}``
        (float32 0-d tensors, 1.0 where a gradient holds an inf or a NaN). One call of
        :func:`non_finite_check_and_unscale` per device (on CUDA one kernel launch per dtype)."""
        from .. import zeros
        by_device = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if not allow_fp16 and g.dtype.itemsize == 2:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                by_device.setdefault(g.device, []).append(g)
        found = {}
        for dev, grads in by_device.items():
            found_inf = zeros((), dtype=_dtype.float32, device=dev)
            inv = inv_scale.to(dev)
            backend = dev.backend
            unscale = backend.overrides.get(non_finite_check_and_unscale, non_finite_check_and_unscale)
            ctx = dev._ctx
            if ctx is None:
                unscale(backend.xp, [g._data for g in grads], found_inf._data, inv._data)
            else:
                with ctx:
                    unscale(backend.xp, [g._data for g in grads], found_inf._data, inv._data)
            for g in grads:
                g._vc[0] += 1      # written in place
            found[str(dev)] = found_inf
        return found

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale now (before clipping them, say)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._state(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step(*args, **kwargs)`` unless a gradient holds an inf or a NaN; returns its
        return value (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(float(v.item()) for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Set the next scale: ``new_scale`` if given, else back off after inf/NaN or grow after
        ``growth_interval`` clean steps."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        from .._tensor import Tensor
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                if not (isinstance(new_scale, Tensor) and new_scale.numel() == 1 and
                        new_scale.dtype is _dtype.float32 and not new_scale.requires_grad):
                    raise AssertionError("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                                         "torch.FloatTensor with requires_grad=False.")
                self._scale.copy_(new_scale.reshape(()))
        else:
            found_infs = [f.to(self._scale.device) for state in self._per_optimizer_states.values()
                          for f in state["found_inf_per_device"].values()]
            if not found_infs:
                raise AssertionError("No inf checks were recorded prior to update.")
            found = found_infs[0]
            for f in found_infs[1:]:
                found = found + f
            self._update_scale(found)
        self._per_optimizer_states = {}

    def _update_scale(self, found_inf):
        """PyTorch's ``_amp_update_scale_``, on the device: scale and growth counter from ``found_inf``."""
        from .. import where
        hit = found_inf > 0
        grown = self._growth_tracker + 1
        grow = (~hit) & (grown >= self._growth_interval)
        new_scale = where(hit, self._scale * self._backoff_factor,
                          where(grow, self._scale * self._growth_factor, self._scale))
        new_scale = where(new_scale.isfinite(), new_scale, self._scale)
        self._scale.copy_(new_scale)
        self._growth_tracker.copy_(where(hit | grow, grown * 0, grown))

    # ------------------------------------------------------------------ queries and state
    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """PyTorch's layout: scale, the factors, the interval and the growth counter ({} when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = state["_growth_tracker"] = None
        state["_per_optimizer_states"] = {}
        return state

