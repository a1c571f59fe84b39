"""The Tensor: an array on a device plus its autograd metadata.

Ops are not defined here: each op lives in ``gputorch/ops`` and its Tensor
methods and operators are attached from the op registry (see ``ops/registry.py``).
This module holds what is specific to the tensor object itself: metadata,
``requires_grad``/``grad``/``grad_fn``, hooks, ``backward``, device and dtype
moves, NumPy/DLPack interchange and printing.
"""
import numbers
import warnings

import numpy as np

from . import _dtype
from ._device import device as Device
from ._tracing import STATE as _TRACING
from ._layouts import strided as _STRIDED
from ._size import Size as _Size
from .autograd import grad_mode
from .autograd.node import grad_accumulator
from .backends.cpu import ZeroDimArray as _ZeroDimArray, keep_zero_dim as _keep_zero_dim
from .utils.hooks import add_hook

_GRAD_ENABLED = grad_mode.GRAD_ENABLED
_NDARRAY = np.ndarray
_CPU = Device("cpu")
_CPU.backend  # noqa: B018 - load the CPU backend eagerly: every process uses it

# Observers of tensor creation: ``hook(tensor)`` runs for every Tensor made by ``_make`` or
# ``_init_from`` (the memory profiler registers here). Empty, it costs one check per tensor.
CREATION_HOOKS = []


class Tensor:
    """A multi-dimensional array on a device, with autograd.

    Internals (stable for the rest of the package):
        _data: backend array (NumPy or CuPy), possibly a view of another tensor's array.
        _device: interned ``gputorch.device``.
        _dtype: ``gputorch.dtype`` matching ``_data.dtype``.
        _requires_grad: True for leaves that require grad and for every graph output.
        _grad_fn, _output_nr: the node that produced this tensor and which of its outputs.
        _vc: one-element list, the version counter shared by all views of a storage.
        _base: the tensor this one is a view of (None if not a view).
    """

    __slots__ = ("_data", "_device", "_dtype", "_requires_grad", "_grad_fn", "_output_nr", "_vc",
                 "__dict__", "__weakref__")

    # Rarely set fields live in the instance dict, with these class-level defaults, so that
    # making a tensor (done for every op) only writes the fields above.
    _grad = None            # accumulated gradient
    _base = None            # the tensor this one is a view of
    _hooks = None           # {id: hook(grad)} for leaves
    _retains_grad = False
    _grad_acc = None        # weakref to this leaf's AccumulateGrad node
    _post_acc_hooks = None  # {id: hook(tensor)}
    _sparse = False         # True for sparse COO tensors (``ops/sparse_coo.py``), whose _data is no array

    @property
    def is_sparse(self):
        """Whether this is a sparse COO tensor."""
        return False
    _grad_dtype = _dtype.float32   # placeholder: ``grad_dtype`` reads an unset one as the tensor's dtype
    _grad_dtype_set = False

    # ---------------------------------------------------------------- construction
    def __new__(cls, *args, device=None, dtype=None):
        """``gputorch.Tensor(data)`` or ``gputorch.Tensor(*sizes)`` (uninitialised, default dtype)."""
        from .ops import creation
        self = object.__new__(cls)
        shares_storage = len(args) == 1 and isinstance(args[0], Tensor)
        if shares_storage:
            src = args[0]
        elif args and all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            src = creation.empty(*args, dtype=dtype, device=device)
        elif len(args) == 1:
            src = creation.tensor(args[0], dtype=dtype or _dtype.get_default_dtype(), device=device)
        elif not args:
            src = creation.empty(0, dtype=dtype, device=device)
        else:
            raise TypeError(f"Tensor(): invalid arguments {args!r}")
        self._init_from(src._data, src._device, src._dtype)
        if shares_storage:
            self._vc = src._vc
        return self

    @classmethod
    def _make_subclass(cls, data, requires_grad=False):
        """A ``cls`` instance sharing ``data``'s storage, as a new leaf (used by nn.Parameter)."""
        self = object.__new__(cls)
        self._init_from(data._data, data._device, data._dtype)
        self._vc = data._vc
        self.requires_grad_(requires_grad)
        return self

    def __init__(self, *args, **kwargs):
        pass

    def _init_from(self, data, device, dtype):
        self._data = _keep_zero_dim(data)
        self._device = device
        self._dtype = dtype
        self._requires_grad = False
        self._grad_fn = None
        self._output_nr = 0
        self._vc = [0]
        if CREATION_HOOKS:
            for hook in CREATION_HOOKS:
                hook(self)

    @staticmethod
    def _make(data, device, dtype=None):
        """Wrap a backend array (internal fast path; no copy, no checks)."""
        t = object.__new__(Tensor)
        cls = data.__class__   # keep_zero_dim(data), inlined: this runs for every op's result
        if cls is _NDARRAY:
            if not data.ndim:
                data = data.view(_ZeroDimArray)
        elif cls is _ZeroDimArray and data.ndim:  # reshaped from a 0-d tensor's array
            data = data.view(_NDARRAY)
        t._data = data
        t._device = device
        t._dtype = dtype if dtype is not None else _dtype._BY_NP[data.dtype]
        t._requires_grad = False
        t._grad_fn = None
        t._output_nr = 0
        t._vc = [0]
        if CREATION_HOOKS:
            for hook in CREATION_HOOKS:
                hook(t)
        return t

    def _detached_alias(self):
        """A tensor sharing data and version counter, without history."""
        t = Tensor._make(self._data, self._device, self._dtype)
        t._vc = self._vc
        if self._base is not None:
            t._base = self._base
        return t

    def _copy_detached(self):
        """A new tensor with a copy of the data, outside the graph."""
        return Tensor._make(self._data.copy(), self._device, self._dtype)

    def _alias_with_history(self, grad_fn, output_nr, requires_grad):
        t = self._detached_alias()
        if requires_grad:
            t._grad_fn = grad_fn
            t._output_nr = output_nr
            t._requires_grad = True
        return t

    # ---------------------------------------------------------------- metadata
    @property
    def shape(self):
        return _Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return _Size(self._data.shape)
        return self._data.shape[self._wrap_dim(dim)]

    def _wrap_dim(self, dim, ndim=None):
        n = self._data.ndim if ndim is None else ndim
        lo, hi = (-1, 0) if n == 0 else (-n, n - 1)
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f"dim must be an int, got {type(dim).__name__}")
        if dim < lo or dim > hi:
            raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
        return dim % n if n else 0

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    @property
    def is_xpu(self):
        """False: gputorch has no Intel GPU backend (programs test ``is_cuda or is_xpu``)."""
        return False

    @property
    def is_mps(self):
        """False: gputorch has no Apple GPU backend."""
        return False

    @property
    def is_meta(self):
        return self._device.type == "meta"

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return int(self._data.size)

    nelement = numel

    def element_size(self):
        return self._dtype.itemsize

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return int(self._data.size) * self._dtype.itemsize

    def stride(self, dim=None):
        x = self._data
        if x.size:
            item = self._dtype.itemsize
            strides = tuple(s // item for s in x.strides)
        else:   # no element to lay out: PyTorch reports row-major strides (sizes of 0 counted as 1)
            strides, step = [], 1
            for n in reversed(x.shape):
                strides.append(step)
                step *= max(n, 1)
            strides = tuple(reversed(strides))
        return strides if dim is None else strides[self._wrap_dim(dim)]

    def _is_view(self):
        """Whether this tensor is a view of another (shares its storage and version counter)."""
        return self._base is not None

    def storage_offset(self):
        return (self._array_address(self._data) - self._array_address(self._storage_root())) // self._dtype.itemsize

    def _storage_root(self):
        """The array owning this tensor's memory, found through ``.base``: starting from the tensor it
        is a view of (CuPy's strided views do not record their owner), or from its own array when that
        lies outside the view's memory (its data was replaced)."""
        root = self._owner_of((self if self._base is None else self._base)._data)
        if self._base is not None:
            start, end = self._array_address(root), self._array_address(root) + getattr(root, "nbytes", 0)
            if not start <= self._array_address(self._data) <= end:
                root = self._owner_of(self._data)
        return root

    @staticmethod
    def _owner_of(base):
        while True:
            owner = base.base
            if owner is not None and not hasattr(owner, "dtype"):   # NumPy's as_strided wrapper object
                owner = getattr(owner, "base", None)
            if owner is None or not hasattr(owner, "dtype"):
                break
            base = owner
        return base

    @staticmethod
    def _array_address(a):
        iface = getattr(a, "__array_interface__", None) or getattr(a, "__cuda_array_interface__", None)
        if iface is None:       # a meta array has no memory: its byte offset into its owner
            return a.offset
        return iface["data"][0]

    def data_ptr(self):
        return self._array_address(self._data)

    def const_data_ptr(self):
        """``data_ptr()`` (gputorch does not tell read-only from writable access)."""
        return self.data_ptr()

    def dim_order(self, *, ambiguity_check=False):
        """The dims from outermost to innermost in memory: sorted by decreasing stride (ties keep
        their order)."""
        strides = self.stride()
        return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))

    def is_contiguous(self, memory_format=None):
        return bool(self._data.flags.c_contiguous)

    def is_floating_point(self):
        return self._dtype.is_floating_point

    def is_signed(self):
        return self._dtype.is_signed

    def as_subclass(self, cls):
        """This tensor seen as an instance of the Tensor subclass ``cls``: the same data, version
        counter and place in the autograd graph."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                            "possible. Make sure your class inherits from Tensor.")
        alias = self.view_as(self)
        alias.__class__ = cls
        return alias

    def is_distributed(self):
        """False: a tensor is not a distributed (sharded) tensor."""
        return False

    def to_dense(self, dtype=None, *, masked_grad=None):
        """The dense tensor: ``self`` (in ``dtype`` when given), every gputorch tensor being dense."""
        return self if dtype is None else self.to(dtype)

    def reinforce(self, reward):
        raise RuntimeError("reinforce() was removed.\nUse torch.distributions instead.\n"
                           "See https://pytorch.org/docs/main/distributions.html")

    def is_inference(self):
        """Whether this is an inference tensor: never in gputorch, whose ``inference_mode`` works as
        ``no_grad`` and makes ordinary tensors (README, "Known differences")."""
        return False

    @property
    def grad_dtype(self):
        """The dtype incoming gradients of this leaf are cast to before ``.grad`` accumulates them:
        the tensor's own dtype unless set; None accepts any dtype. Leaves only."""
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self._grad_dtype if self._grad_dtype_set else self._dtype

    @grad_dtype.setter
    def grad_dtype(self, value):
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        value = None if value is None else _dtype.to_dtype(value)
        grad = self._grad
        if grad is not None and value is not None and grad._dtype is not value:
            raise RuntimeError(f"Cannot set grad_dtype to '{_LEGACY_NAMES[value]}' because there is already a "
                               f"gradient with dtype '{_C_TYPE_NAMES[grad._dtype.name]}'. Please clear the gradient "
                               f"(.grad = None) before changing grad_dtype, or ensure the new grad_dtype matches the "
                               f"existing gradient's dtype.")
        self._grad_dtype, self._grad_dtype_set = value, True

    @property
    def layout(self):
        """``torch.strided``, gputorch's only layout."""
        return _STRIDED

    @property
    def name(self):
        """None: a tensor has no name (PyTorch keeps the attribute for old graph-building code)."""
        return None

    @property
    def volatile(self):
        """Always False: volatile was removed (use ``no_grad``); reading or setting it warns."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value):
        warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                      stacklevel=2)

    def type(self, dtype=None, non_blocking=False):
        """Without an argument: the legacy type name ("torch.FloatTensor", "torch.cuda.LongTensor").
        With a dtype, a legacy type (``LongTensor``) or a legacy type's name: a cast to that type
        (a legacy type also names the device: ``cuda.FloatTensor`` moves to the GPU); ``self``
        when it has that type already."""
        if dtype is None:
            prefix = "torch.cuda." if self._device.type == "cuda" else "torch."
            return prefix + _LEGACY_NAMES[self._dtype] + "Tensor"
        from ._legacy_tensor_types import type_target
        dtype, device_type = type_target(dtype)   # a dtype, a legacy type or its name
        if device_type is None or device_type == self._device.type:
            return self.to(dtype, non_blocking=non_blocking)
        return self.to(device_type, dtype, non_blocking=non_blocking)

    def get_device(self):
        """The CUDA device index holding the tensor; -1 on the CPU."""
        return self._device.index if self._device.type == "cuda" else -1

    def new(self, *args, device=None):
        """Legacy constructor of a tensor with ``self``'s dtype and device: ``new(2, 3)``
        (uninitialised), ``new([1, 2])`` (data), ``new()`` (empty); see ``_legacy_tensor_types``."""
        from ._legacy_tensor_types import construct
        return construct(self._dtype, self._device.type, self._device, args, device)

    @property
    def _version(self):
        return self._vc[0]

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def grad_fn(self):
        return self._grad_fn

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(bool(value))

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach().")
            return self
        if requires_grad and self._dtype._category < 2:
            raise RuntimeError(
                f"only Tensors of floating point and complex dtype can require gradients (got {self._dtype})")
        self._requires_grad = requires_grad
        return self

    @property
    def grad(self):
        if self._grad_fn is not None and not self._retains_grad and self._grad is None:
            import warnings
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
                "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor.",
                UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._device is not self._device:
                raise RuntimeError(f"assigned grad has data located on {value._device}, "
                                   f"different from the tensor's device {self._device}")
            if value._dtype is not self._dtype:
                raise RuntimeError(f"assigned grad has data of a different type ({value._dtype}) "
                                   f"than the tensor ({self._dtype})")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"assigned grad has data of a different size "
                                   f"({list(value.shape)}) than the tensor ({list(self.shape)})")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        """Keep ``.grad`` for this non-leaf tensor after backward (no-op on leaves)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self._retains_grad:
            return
        import weakref
        node = self._grad_fn
        if node._retain_grad_hooks is None:
            node._retain_grad_hooks = {}
        node._retain_grad_hooks[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    # ---------------------------------------------------------------- hooks and backward
    def register_hook(self, hook):
        """``hook(grad) -> Tensor | None`` runs when this tensor's gradient is computed."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn._register_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = {}
        return add_hook(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after a gradient has been accumulated into this leaf's ``.grad``."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = {}
        return add_hook(self._post_acc_hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into the ``.grad`` of every leaf (or of ``inputs``)."""
        from .autograd import engine
        engine.backward((self,), None if gradient is None else (gradient,),
                        retain_graph, create_graph, inputs=inputs)

    def detach(self):
        """A tensor sharing this one's data and version counter, outside the graph."""
        return self._detached_alias()

    def detach_(self):
        if self._base is not None and self._base._requires_grad and _GRAD_ENABLED.value:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self):
        """The same storage as a tensor that autograd does not track (separate version counter)."""
        t = Tensor._make(self._data, self._device, self._dtype)
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data = value._data
        self._device = value._device
        self._dtype = value._dtype

    # ---------------------------------------------------------------- Python protocol
    def __contains__(self, element):
        """``element in tensor``: whether any element equals ``element`` (a number or a tensor)."""
        if not isinstance(element, (Tensor, numbers.Number)):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                               f"{type(element)}.")
        return bool((self == element).any())

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __bool__(self):
        size = self._data.size
        if size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no values' if size == 0 else 'more than one value'} "
                               f"is ambiguous (the tensor has shape {list(self._data.shape)})")
        return bool(self.item())

    def __float__(self):
        return float(self._scalar_value("float"))

    def __int__(self):
        return int(self._scalar_value("int"))

    def __index__(self):
        if self._dtype._category == 2 or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        return complex(self._scalar_value("complex"))

    def _scalar_value(self, what):
        if self._data.size != 1:
            raise ValueError(f"only one element tensors can be converted to Python scalars "
                             f"({what}() of a tensor of shape {list(self._data.shape)})")
        return self.item()

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if _TRACING.graph is not None:
            from .jit._tracer import warn_value_read
            warn_value_read("number")
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._device.backend.to_numpy(self._data).tolist()

    def numpy(self, *, force=False):
        """The NumPy array sharing this CPU tensor's memory (``force=True`` copies/detaches)."""
        if force:
            return np.array(self._device.backend.to_numpy(self._data), copy=True) \
                if self._device.type != "cpu" else self._device.backend.to_numpy(self._data)
        if self._device.type != "cpu":
            raise TypeError(
                f"can't convert {self._device} device type tensor to numpy. Use Tensor.cpu() to copy "
                "the tensor to host memory first.")
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._device.backend.to_numpy(self._data)

    def __array__(self, dtype=None, copy=None):
        arr = self._device.backend.to_numpy(self._data)
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def __dlpack__(self, stream=None, *, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule sharing this tensor's memory (versioned when the consumer asks)."""
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        kwargs = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                    ("copy", copy)) if v is not None}
        if stream is not None and self._device.type == "cuda":
            kwargs["stream"] = stream
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import tensor_repr
        return tensor_repr(self, tensor_contents)

    def __format__(self, spec):
        if self._data.ndim == 0:  # f"{loss}" and f"{loss:.3f}" format the Python number
            return self.item().__format__(spec)
        return object.__format__(self, spec) if spec else repr(self)

    def __reduce_ex__(self, protocol):
        arr = self._device.backend.to_numpy(self._data)
        return (_rebuild_tensor, (np.array(arr), str(self._device), self._requires_grad))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol")
        data = self._copy_detached()
        if type(self) is Tensor:
            new = data
            new._requires_grad = self._requires_grad
        else:
            new = type(self)._make_subclass(data, self._requires_grad)
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        if self.__dict__:
            import copy
            new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        memo[id(self)] = new
        return new

    __array_priority__ = 1000
    __array_ufunc__ = None      # NumPy operators (``ndarray * tensor``) defer to the Tensor's reflected ones


def _rebuild_tensor(array, device_str, requires_grad):
    from .ops.creation import tensor
    return tensor(array, device=device_str, requires_grad=requires_grad)


def _grad_edge(t):
    """The (node, input_nr) edge through which a gradient reaches tensor ``t``."""
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


_LEGACY_NAMES = _dtype._LEGACY_NAMES
_C_TYPE_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
                 "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
                 "float64": "double"}
