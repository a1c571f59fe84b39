"""``Parameter`` and ``Buffer``: tensors that a Module registers when they are assigned to it.

A :class:`Parameter` is a Tensor subclass sharing its data's storage; it is a leaf that
requires grad by default, and assigning one to a Module attribute adds it to the module's
parameters. Ops on a Parameter return plain Tensors (the dispatcher always wraps results
as ``Tensor``), as in PyTorch.

``Buffer(t)`` returns a detached plain Tensor marked as a buffer (``isinstance(x, Buffer)``
holds for it); assigning it to a Module attribute registers it as a buffer.

:class:`UninitializedParameter` and :class:`UninitializedBuffer` are the placeholders of lazy
modules (``nn.LazyLinear`` ...): they know their dtype and device but not their shape, refuse to
be used in ops (``ValueError``), and :meth:`~UninitializedTensorMixin.materialize` turns them, in
place (the same object, so an optimizer built earlier holds it), into a Parameter / Tensor.
"""
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


class Parameter(Tensor):
    """A Tensor that is a module parameter.

    Args:
        data (Tensor): the parameter's data (shared, not copied). Default: an empty tensor.
        requires_grad (bool): whether the parameter requires gradient (not affected by
            ``no_grad``). Default: ``True``.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        return cls._make_subclass(data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        known = memo.get(id(self))
        if known is not None:
            return known
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        state = dict(self.__dict__)
        for transient in ("_grad", "_grad_acc", "_hooks", "_post_acc_hooks", "_base", "_retains_grad"):
            state.pop(transient, None)
        return (_rebuild_parameter, (self.data, self.requires_grad, state))


def _rebuild_parameter(data, requires_grad, state=None):
    """Unpickling: a Parameter over ``data`` (hooks are not serialized, as in PyTorch)."""
    param = Parameter(data, requires_grad)
    if state:
        param.__dict__.update(state)
    return param


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` holds for the tensors that ``Buffer(...)`` returned."""

    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and bool(getattr(instance, "_is_buffer", False))
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A Tensor that is module state but not a parameter (e.g. BatchNorm's running mean).

    Args:
        data (Tensor): buffer tensor (shared, not copied). Default: an empty tensor.
        persistent (bool): whether the buffer is part of the module's ``state_dict``. Default: ``True``.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


_USE_ERROR = ("Attempted to use an uninitialized parameter in {}. This error happens when you are using a "
              "`LazyModule` or explicitly manipulating `torch.nn.parameter.UninitializedParameter` objects. When "
              "using LazyModules Call `forward` with a dummy batch to initialize the parameters before calling torch "
              "functions")
_SHAPE_ERROR = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
                "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
                "`forward` to initialize the parameters before accessing their attributes.")
_STORED = Tensor._data      # the slot that holds the array (an empty one while uninitialized)


class UninitializedTensorMixin:
    """What the two placeholders share: no shape yet, no use in ops, ``materialize``.

    Reading the array (what every op does) raises ``ValueError``; dtype, device, requires_grad,
    ``.data`` and moves/casts (``to``, ``cuda``, ``double`` ...; what ``Module.to`` applies) work
    on the empty placeholder array, so that ``materialize`` creates the tensor where it belongs.
    """
    cls_to_become = None

    @property
    def _data(self):
        raise ValueError(_USE_ERROR.format("an operation"))

    @_data.setter
    def _data(self, value):
        _STORED.__set__(self, value)

    def _placeholder(self):
        """The empty array as a plain Tensor (for moves and casts)."""
        return Tensor._make(_STORED.__get__(self), self._device, self._dtype)

    def _moved(self, result):
        """What a move/cast returns: the moved placeholder (a parameter takes it as its ``.data``)."""
        return result

    def materialize(self, shape, device=None, dtype=None):
        """Become an (uninitialized-valued) ``cls_to_become`` of ``shape``, on ``device`` / of ``dtype``
        (default: the placeholder's), keeping this object's identity."""
        from ..ops.creation import empty
        device = self._device if device is None else device
        dtype = self._dtype if dtype is None else dtype
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        made = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become
        self.data = made

    @property
    def shape(self):
        raise RuntimeError(_SHAPE_ERROR)

    def size(self, dim=None):
        return self._placeholder().size(dim)

    @property
    def data(self):
        return self._placeholder()

    @data.setter
    def data(self, value):
        Tensor.data.__set__(self, value)

    def to(self, *args, **kwargs):
        return self._moved(self._placeholder().to(*args, **kwargs))

    def cuda(self, *args, **kwargs):
        return self._moved(self._placeholder().cuda(*args, **kwargs))

    def cpu(self, *args, **kwargs):
        return self._moved(self._placeholder().cpu(*args, **kwargs))

    def type(self, *args, **kwargs):
        return self._moved(self._placeholder().type(*args, **kwargs))

    def double(self, *args, **kwargs):
        return self._moved(self._placeholder().double(*args, **kwargs))

    def float(self, *args, **kwargs):
        return self._moved(self._placeholder().float(*args, **kwargs))

    def half(self, *args, **kwargs):
        return self._moved(self._placeholder().half(*args, **kwargs))

    def bfloat16(self, *args, **kwargs):
        return self._moved(self._placeholder().bfloat16(*args, **kwargs))

    def detach(self):
        raise ValueError(_USE_ERROR.format("detach"))

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo):
        known = memo.get(id(self))
        if known is None:
            known = memo[id(self)] = type(self)(requires_grad=self.requires_grad, device=self._device,
                                                dtype=self._dtype)
        return known

    def __reduce_ex__(self, protocol):
        return (_rebuild_uninitialized, (type(self), self.requires_grad, self._placeholder()))


def _rebuild_uninitialized(cls, requires_grad, placeholder):
    return cls(requires_grad=requires_grad, device=placeholder.device, dtype=placeholder.dtype)


def _placeholder_array(device, dtype):
    from ..ops.creation import empty
    return empty(0, device=device, dtype=dtype)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (lazy modules); ``materialize(shape)`` makes it a
    :class:`Parameter`."""
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return cls._make_subclass(_placeholder_array(device, dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (lazy modules); ``materialize(shape)`` makes it a
    plain Tensor."""
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = cls._make_subclass(_placeholder_array(device, dtype), requires_grad)
        t.persistent = persistent
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass

    def _moved(self, result):
        # A module replaces its buffers by their moved versions: they stay placeholders.
        if not isinstance(result, Tensor):
            return result
        return UninitializedBuffer(self.requires_grad, result.device, result.dtype,
                                   getattr(self, "persistent", True))


def is_lazy(param):
    """Whether ``param`` is an uninitialized (lazy) parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)
