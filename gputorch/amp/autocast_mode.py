"""Autocast: ops run in a lower precision or in float32 by op class, as in ``torch.autocast``.

Inside ``with gputorch.autocast("cuda"):`` an op of the *lower-precision* class (matrix products,
linear, convolutions) gets its floating-point inputs cast to the region's dtype (float16), an op of
the *float32* class (losses, softmax on CUDA, exp/log/pow, norms, sums) gets its float16 and
bfloat16 inputs cast to float32, an op of the *promote* class runs in its widest input type, and
every other op runs on its inputs as they come. float64 inputs are never cast down. The casts
are ordinary differentiable ops (gradients flow back to the float32 parameters), and a region
caches the cast of each leaf that requires grad (a parameter is cast once per region when
``cache_enabled``).

The state is thread-local and per device type; regions nest (an inner region may disable or change
the dtype). The backward pass runs outside autocast, as in PyTorch (the engine switches it off).

The op classes are PyTorch's lists for each device type (its CPU and CUDA lists differ), kept in
:mod:`.op_lists` as graph-node names (ops implemented as one node) and as functions (composite ops,
whose wrapper casts on entry and runs the body with autocast off: see :func:`autocast_function`).
A region's dtype is float16 or bfloat16; the default is float16 on CUDA and bfloat16 on the CPU, as
in PyTorch. bfloat16 needs ``ml_dtypes`` and exists on the CPU only (:mod:`gputorch._bfloat16`), so
a CUDA region with ``dtype=gputorch.bfloat16`` warns and stays disabled, as PyTorch does for an
unsupported dtype. ``dtype=gputorch.float16`` on the CPU is slow but correct: for tests and for
checking a model before it goes to a GPU.
"""
import functools
import threading
import warnings

from .. import _dtype
from .op_lists import BANNED_MESSAGE, DEFAULT_DTYPE, FUNCTIONS, NODES

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "autocast_function", "STATE",
           "cast_inputs", "disabled", "snapshot", "restored"]

_CLASSES = ("lower", "fp32", "promote", "banned")


class _State(threading.local):
    """Per thread: ``regions`` maps a device type to its innermost ``(enabled, dtype)``; ``active``
    is the tuple of device types with autocast on (empty: the dispatcher's one check); ``cache``
    holds the casts of leaves made in the outermost region."""

    def __init__(self):
        self.regions = {}
        self.active = ()
        self.cache = {}
        self.depth = 0


STATE = _State()
_classes = {}   # device type -> {class name: frozenset of node classes}, built on first use
# A device type whose ops follow another's lists: "meta" while the memory estimator replays a model
# as it would run under autocast on its real device (``imitated_region``).
_RULES_OF = {}


def _node_classes(names):
    from ..autograd.node import Node
    found, stack = set(), [Node]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            stack.append(sub)
            if sub.__name__ in names:
                found.add(sub)
    return frozenset(found)


def _policy(device_type):
    """``{class name: frozenset of node classes}`` of ``device_type`` (built on first use)."""
    device_type = _RULES_OF.get(device_type, device_type)
    key = device_type if device_type in NODES else "cuda"
    if key not in _classes:
        _classes[key] = {name: _node_classes(NODES[key][name]) for name in _CLASSES}
    return _classes[key]


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` (default ``"cuda"``) in this thread."""
    return (device_type or "cuda") in STATE.active


def get_autocast_dtype(device_type):
    """The dtype of ``device_type``'s innermost region (its default outside any region)."""
    region = STATE.regions.get(device_type)
    if region is not None:
        return region[1]
    return getattr(_dtype, DEFAULT_DTYPE.get(device_type, "float16"), _dtype.float16)


def _cast(t, dtype):
    """``t`` as ``dtype``; a leaf requiring grad is cast once per outermost region (cached)."""
    if t._dtype is dtype:
        return t
    if t._grad_fn is None and t._requires_grad:
        key = (id(t), dtype)
        hit = STATE.cache.get(key)
        if hit is not None and hit[0] is t and hit[1] == t._vc[0]:
            return hit[2]
        out = t.to(dtype)
        STATE.cache[key] = (t, t._vc[0], out)
        return out
    return t.to(dtype)


def _cast_all(args, device_type, target, eligible):
    """``args`` with each eligible tensor of ``device_type`` cast to ``target`` (also inside lists and
    tuples of tensors, as PyTorch casts tensor-list arguments)."""
    from .._tensor import Tensor
    out = []
    for a in args:
        if isinstance(a, Tensor):
            if a._device.type == device_type and eligible(a._dtype):
                a = _cast(a, target)
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            a = type(a)(_cast_all(a, device_type, target, eligible))
        out.append(a)
    return tuple(out)


def _lower_eligible(dt):
    return dt._category == 2 and dt is not _dtype.float64


def _fp32_eligible(dt):
    return dt is _dtype.float16 or dt is _dtype.bfloat16


def _widest(args):
    """The widest floating dtype among the tensors of ``args`` (None when there is none)."""
    from .._tensor import Tensor
    widest = None
    for a in args:
        if isinstance(a, (list, tuple)):
            inner = _widest(a)
            if inner is not None:
                widest = inner if widest is None else _dtype.promote_types(widest, inner)
        elif isinstance(a, Tensor) and a._dtype._category == 2:
            widest = a._dtype if widest is None else _dtype.promote_types(widest, a._dtype)
    return widest


def _cast_by_class(kind, args, device_type, region):
    if kind == "lower":
        return _cast_all(args, device_type, region[1], _lower_eligible)
    if kind == "fp32":
        return _cast_all(args, device_type, _dtype.float32, _fp32_eligible)
    if kind == "promote":
        widest = _widest(args)
        if widest is None:
            return args
        return _cast_all(args, device_type, widest, lambda dt: dt._category == 2)
    if kind == "plain":
        return args
    raise RuntimeError(BANNED_MESSAGE)


def cast_inputs(cls, device_type, args):
    """The dispatcher's hook: ``args`` cast for op ``cls`` under this thread's autocast state."""
    region = STATE.regions.get(device_type)
    if region is None or not region[0]:
        return args
    for kind, classes in _policy(device_type).items():
        if cls in classes:
            return _cast_by_class(kind, args, device_type, region)
    return args


def autocast_function(name):
    """Decorator for an op function that autocast must see before its own checks run: a composite op
    of one of PyTorch's classes (see :mod:`.op_lists`), or a one-node op whose function checks its
    operands' dtypes. Its tensor arguments are cast on entry, and its body runs with autocast off,
    as PyTorch runs an autocast op's own implementation (a float32-class composite stays in float32
    even where its body calls a matrix product)."""
    def wrap(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            matched = False
            for device_type in STATE.active:
                rules = FUNCTIONS.get(_RULES_OF.get(device_type, device_type), {})
                kind = next((k for k, names in rules.items() if name in names), None)
                if kind is None:
                    continue
                matched = True
                region = STATE.regions[device_type]
                args = _cast_by_class(kind, args, device_type, region)
                kwargs = dict(zip(kwargs, _cast_by_class(kind, tuple(kwargs.values()), device_type, region)))
            if not matched:
                return fn(*args, **kwargs)
            with disabled():
                return fn(*args, **kwargs)
        return op
    return wrap


def _unsupported(device_type, dtype):
    """Why ``dtype`` cannot be a region's dtype on ``device_type`` (None when it can)."""
    if dtype not in (_dtype.float16, _dtype.bfloat16):
        return f"{dtype} is no lower-precision floating type; use gputorch.float16 or gputorch.bfloat16"
    if dtype is _dtype.bfloat16 and dtype.np is None:
        return "bfloat16 needs the ml_dtypes package (pip install ml_dtypes); or pass dtype=gputorch.float16"
    if dtype is _dtype.bfloat16 and device_type != "cpu":
        return "gputorch computes in bfloat16 on the CPU only; use dtype=gputorch.float16"
    return None


def _refresh():
    STATE.active = tuple(d for d, (on, _) in STATE.regions.items() if on)


class autocast:
    """``with autocast(device_type, dtype=None, enabled=True, cache_enabled=None):`` (or as a
    decorator): run the ops of the region in mixed precision (see the module docstring)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = _dtype.to_dtype(dtype) if dtype is not None else None
        self._enabled = bool(enabled)
        self._cache_enabled = True if cache_enabled is None else bool(cache_enabled)
        if self.device not in ("cuda", "cpu"):
            warnings.warn(f"gputorch's autocast supports device types 'cuda' and 'cpu', not '{self.device}': "
                          "disabling autocast.", UserWarning, stacklevel=2)
            self._enabled = False
        if self.fast_dtype is None:
            self.fast_dtype = getattr(_dtype, DEFAULT_DTYPE.get(self.device, "float16"))
        reason = _unsupported(self.device, self.fast_dtype)
        if reason is not None:
            if self._enabled:
                warnings.warn(f"In {self.device.upper()} autocast, but the target dtype is not supported "
                              f"({reason}). Disabling autocast.", UserWarning, stacklevel=2)
            self._enabled = False

    def __enter__(self):
        self._previous = STATE.regions.get(self.device)
        STATE.regions[self.device] = (self._enabled, self.fast_dtype)
        STATE.depth += 1
        _refresh()
        return self

    def __exit__(self, *exc):
        STATE.depth -= 1
        if self._previous is None:
            del STATE.regions[self.device]
        else:
            STATE.regions[self.device] = self._previous
        if STATE.depth == 0 or not self._cache_enabled:
            STATE.cache.clear()
        _refresh()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)
        return run


class disabled:
    """Every autocast region of this thread off (the backward pass runs so), restored on exit."""

    def __enter__(self):
        self._saved = (STATE.regions, STATE.active)
        STATE.regions, STATE.active = {}, ()
        return self

    def __exit__(self, *exc):
        STATE.regions, STATE.active = self._saved
        return False


class imitated_region:
    """An autocast region on the ``meta`` device with the lists of ``rules_device_type`` and ``dtype``:
    how the memory estimator replays, on shape-only tensors, a model that will run under
    ``autocast(rules_device_type, dtype)``. Internal (PyTorch's autocast has no meta region)."""

    def __init__(self, rules_device_type, dtype):
        self.rules = rules_device_type
        self.dtype = _dtype.to_dtype(dtype)

    def __enter__(self):
        self._previous = (STATE.regions.get("meta"), _RULES_OF.get("meta"))
        _RULES_OF["meta"] = self.rules
        STATE.regions["meta"] = (True, self.dtype)
        STATE.depth += 1
        _refresh()
        return self

    def __exit__(self, *exc):
        STATE.depth -= 1
        region, rules = self._previous
        if region is None:
            del STATE.regions["meta"]
        else:
            STATE.regions["meta"] = region
        if rules is None:
            _RULES_OF.pop("meta", None)
        else:
            _RULES_OF["meta"] = rules
        if STATE.depth == 0:
            STATE.cache.clear()
        _refresh()
        return False


def snapshot():
    """This thread's autocast regions, to run a recomputation (checkpointing) as its forward ran."""
    return dict(STATE.regions)


class restored(disabled):
    """The autocast regions of a :func:`snapshot` in force, the current ones restored on exit."""

    def __init__(self, regions):
        self._regions = regions

    def __enter__(self):
        super().__enter__()
        STATE.regions = dict(self._regions)
        _refresh()
        return self
