"""The simulated CuPy's ``ndarray``: a device array that is *not* a NumPy array (tests only).

It holds a NumPy array (the simulated device memory) and offers what ``cupy.ndarray`` offers, and
no more: the attributes and methods of CuPy's ndarray (listed in ``simulated_cupy_api.NDARRAY``),
operators, indexing, DLPack. What CuPy refuses, it refuses the same way:

* ``numpy.asarray(a)`` / ``numpy.array(a)`` (``__array__``) is a TypeError: ``a.get()``,
  ``cupy.asnumpy(a)`` and DLPack are the ways to the host;
* ``float(a)`` / ``int(a)`` / ``bool(a)`` of an array of more than one element raise as NumPy's do;
  there is no ``__index__`` (a 0-d device array is not a Python integer);
* a host NumPy array as an operand of a device op (``a + host``, ``cupy.concatenate([a, host])``)
  is a TypeError;
* every op checks that its arrays live on the current device (a ValueError otherwise).

NumPy functions and ufuncs called on these arrays dispatch to the simulated CuPy's functions of
the same name (``__array_function__`` / ``__array_ufunc__``), as CuPy's arrays do.
"""
import sys
import weakref

import numpy as np

from . import simulated_cupy_graph as _graph

_host = np.ndarray


def _scp():
    return sys.modules["gputorch.backends.simulated_cupy"]


def _current():
    return _scp()._runtime._current


_owners = weakref.WeakValueDictionary()   # id(NumPy array owning the memory) -> the device array over it


def _root(host):
    while isinstance(host.base, _host):
        host = host.base
    return host


def new(host, device_id):
    """A device array over the NumPy array ``host`` (no copy) on ``device_id``; its memory is counted
    by that device's pool. Like CuPy's, a view's ``base`` is the device array that owns the memory
    (one object, kept alive by its views)."""
    out = object.__new__(ndarray)
    out._a = host
    out._device_id = device_id
    root = _root(host)
    if root is host:
        out._base = None
        _owners[id(host)] = out
        _scp()._pools.track(host, device_id)
        _graph.allocated(host)
    else:
        owner = _owners.get(id(root))
        out._base = owner if owner is not None else new(root, device_id)
    return out


def check_current(arrays):
    current = _current()
    for a in arrays:
        if type(a) is ndarray and a._device_id != current:
            raise ValueError(
                f"Array device must be same as the current device: array device = {a._device_id} "
                f"while current = {current}")


def reject_host(values, what):
    """CuPy refuses host (NumPy) arrays as operands of device ops: a TypeError, not a silent copy."""
    for v in values:
        items = v if isinstance(v, (list, tuple)) else (v,)
        for x in items:
            if isinstance(x, _host):
                raise TypeError(f"{what}: Unsupported type <class 'numpy.ndarray'> (a host array of shape "
                                f"{x.shape}, dtype {x.dtype}); move it to the device with cupy.asarray first")


def flatten_arrays(obj, found):
    if type(obj) is ndarray:
        found.append(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            flatten_arrays(x, found)
    return found


def unwrap(obj):
    if type(obj) is ndarray:
        return obj._a
    if isinstance(obj, list):
        return [unwrap(x) for x in obj]
    if isinstance(obj, tuple):
        return tuple(unwrap(x) for x in obj)
    return obj


def wrap(result, device_id=None, inputs=()):
    """Results land on the current device (or ``device_id``). A NumPy scalar result (a reduction, an op
    on 0-d arrays, an element) is a 0-d device array, as CuPy never returns host scalars from device
    ops. A result that *is* one of ``inputs``' buffers (``out=``, a no-op conversion) is that input."""
    if isinstance(result, _host):
        for x in inputs:
            if type(x) is ndarray and x._a is result:
                return x
        return new(result, _current() if device_id is None else device_id)
    if isinstance(result, np.generic):
        return new(np.asarray(result), _current() if device_id is None else device_id)
    if isinstance(result, tuple):
        return tuple(wrap(r, device_id, inputs) for r in result)
    if isinstance(result, list):
        return [wrap(r, device_id, inputs) for r in result]
    return result


# Functions that write into an argument (device work even when they return nothing new).
_WRITING = {"copyto", "put", "place", "putmask", "fill_diagonal", "at", "scatter_add", "scatter_max", "scatter_min",
            "fill", "sort", "partition", "byteswap", "shuffle"}


def call(func, args, kwargs, name="cupy function"):
    """``func`` (NumPy's) on the arrays behind device arrays: run now, or recorded into the graph
    of a capture in progress (see simulated_cupy_graph)."""
    arrays = flatten_arrays(list(args) + list(kwargs.values()), [])
    check_current(arrays)
    _graph.library_call(name)
    uargs, ukwargs = unwrap(args), {k: unwrap(v) for k, v in kwargs.items()}
    writes = kwargs.get("out") is not None or name.rsplit(".", 1)[-1] in _WRITING
    return wrap(_graph.run(name, lambda: func(*uargs, **ukwargs), arrays, writes), inputs=arrays)


def _check_method_call(name, args, kwargs):
    """A TypeError when ``args``/``kwargs`` do not fit the parameters of CuPy's ``ndarray.<name>``."""
    scp = _scp()
    spec = scp._api.NDARRAY_METHODS.get(name)
    if spec is not None:
        scp._check_call(f"cupy.ndarray.{name}", spec, args, kwargs)


def _method(name, check_device=True, host_result=False):
    """A CuPy ndarray method served by the NumPy array's method of the same name."""
    def method(self, *args, **kwargs):
        _check_method_call(name, args, kwargs)
        arrays = flatten_arrays([self, *args, *kwargs.values()], [])
        if check_device:
            check_current(arrays)
        reject_host([*args, *kwargs.values()], f"cupy.ndarray.{name}")
        qualname = f"cupy.ndarray.{name}"
        _graph.library_call(qualname)
        bound, uargs, ukwargs = getattr(self._a, name), unwrap(args), {k: unwrap(v) for k, v in kwargs.items()}
        writes = kwargs.get("out") is not None or name in _WRITING
        result = _graph.run(qualname, lambda: bound(*uargs, **ukwargs), arrays, writes)
        return result if host_result else wrap(result, self._device_id, arrays)
    method.__name__ = name
    return method


def _view_method(name):
    """A method that only re-describes the memory (no kernel): no device check, the result stays on
    the array's device."""
    def method(self, *args, **kwargs):
        _check_method_call(name, args, kwargs)
        return wrap(getattr(self._a, name)(*unwrap(args), **kwargs), self._device_id, [self])
    method.__name__ = name
    return method


def _operator(ufunc_name, reflected=False):
    def op(self, other):
        if isinstance(other, _host):
            # CuPy raises for a host operand rather than deferring (numpy.ndarray would copy it)
            reject_host([other], f"cupy.{ufunc_name}")
        if not isinstance(other, (ndarray, int, float, complex, bool, np.generic)):
            return NotImplemented
        ufunc = getattr(_scp(), ufunc_name)
        return ufunc(other, self) if reflected else ufunc(self, other)
    return op


def _inplace(ufunc_name):
    def op(self, other):
        reject_host([other], f"cupy.{ufunc_name}")
        getattr(_scp(), ufunc_name)(self, other, out=self)
        return self
    return op


def _raise_as_cupy(exc):
    """Re-raise NumPy's indexing error ``exc`` as CuPy's error for the same mistake."""
    error = _scp()._semantics.index_error_as_cupy(exc)
    if error is None:
        raise exc
    raise error from None


class ndarray:
    """``cupy.ndarray`` on a simulated device: ``ndarray(shape, dtype=float, memptr=None, strides=None,
    order='C')`` allocates uninitialised memory on the current device."""

    __slots__ = ("_a", "_device_id", "_base", "__weakref__")
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        if memptr is not None or strides is not None:
            raise NotImplementedError("the simulated cupy.ndarray takes no memptr/strides")
        self._a = np.empty(shape, dtype=dtype, order=order)
        self._device_id = _current()
        self._base = None
        _owners[id(self._a)] = self
        _scp()._pools.track(self._a, self._device_id)
        _graph.allocated(self._a)

    # ------------------------------------------------------------------ leaving the device
    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct "
                        "a NumPy array explicitly.")

    def get(self, stream=None, order="C", out=None, blocking=True):
        """Copy to the host as a NumPy array (into ``out`` when given)."""
        _graph.host_sync("cupy.ndarray.get")
        if out is not None:
            np.copyto(out, self._a)
            return out
        return np.array(self._a, order=order, copy=True)

    def set(self, arr, stream=None):
        """Copy the host array ``arr`` into this array (same shape)."""
        if isinstance(arr, ndarray):
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        arr = np.array(arr, copy=True)
        _graph.host_to_device("cupy.ndarray.set", arr)
        if arr.shape != self._a.shape:
            raise ValueError(f"Shape mismatch. Old shape: {self._a.shape}, new shape: {arr.shape}")
        target = self._a

        def copy():
            target[...] = arr
        _graph.run("memcpyHtoD", copy, [self], writes=True, kind="memcpy")

    def item(self):
        """The element of a one-element array as a Python scalar (CuPy's ``item`` takes no index)."""
        _graph.host_sync("cupy.ndarray.item")
        return self._a.item()

    def tolist(self):
        _graph.host_sync("cupy.ndarray.tolist")
        return self._a.tolist()

    def tobytes(self, order="C"):
        _graph.host_sync("cupy.ndarray.tobytes")
        return self._a.tobytes(order)

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()

    def toDlpack(self):
        return self._a.__dlpack__()

    def __reduce__(self):
        raise TypeError("simulated CUDA arrays cannot be pickled; copy them to the host first")

    # ------------------------------------------------------------------ metadata
    shape = property(lambda self: self._a.shape)

    @shape.setter
    def shape(self, value):
        self._a.shape = value

    dtype = property(lambda self: self._a.dtype)
    strides = property(lambda self: self._a.strides)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: self._a.flags)

    @property
    def base(self):
        return self._base

    @property
    def T(self):
        return new(self._a.T, self._device_id)

    @property
    def mT(self):
        return new(self._a.mT, self._device_id)

    @property
    def real(self):
        return new(self._a.real, self._device_id)

    @property
    def imag(self):
        return new(self._a.imag, self._device_id)

    @property
    def device(self):
        return _scp().Device(self._device_id)

    @property
    def data(self):
        """``cupy.cuda.MemoryPointer``: ``.ptr`` is the address of the first element."""
        return _scp()._MemoryPointer(self._a.__array_interface__["data"][0], self._device_id)

    @property
    def __cuda_array_interface__(self):
        info = self._a.__array_interface__
        return {"shape": info["shape"], "typestr": info["typestr"], "data": info["data"],
                "strides": info["strides"], "version": 3, "descr": info["descr"], "stream": 1}

    def __len__(self):
        return len(self._a)

    def __repr__(self):
        _graph.host_sync("repr(cupy.ndarray)")
        return repr(self._a)

    def __str__(self):
        _graph.host_sync("str(cupy.ndarray)")
        return str(self._a)

    def __format__(self, spec):
        _graph.host_sync("format(cupy.ndarray)")
        return format(self._a.item() if self._a.ndim == 0 else self._a, spec)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    # ------------------------------------------------------------------ to Python scalars
    def __bool__(self):
        _graph.host_sync("bool(cupy.ndarray)")
        return bool(self._a)

    def __float__(self):
        _graph.host_sync("float(cupy.ndarray)")
        return float(self._a)

    def __int__(self):
        _graph.host_sync("int(cupy.ndarray)")
        return int(self._a)

    def __complex__(self):
        _graph.host_sync("complex(cupy.ndarray)")
        return complex(self._a)

    # ------------------------------------------------------------------ copies and views
    def copy(self, order="C"):
        """A copy on the *current* device (CuPy's copy may read another device's array)."""
        a = self._a
        return new(_graph.run("cupy.ndarray.copy", lambda: a.copy(order), [self], kind="memcpy"), _current())

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        check_current([self])
        a = self._a
        result = _graph.run("cupy.ndarray.astype",
                            lambda: a.astype(dtype, order=order, casting=casting or "unsafe", copy=copy), [self])
        return self if result is self._a else new(result, self._device_id)

    def view(self, dtype=None, type=None):
        if type is not None:
            raise TypeError("the simulated cupy.ndarray.view takes no type")
        return new(self._a.view() if dtype is None else self._a.view(dtype), self._device_id)

    reshape = _view_method("reshape")
    ravel = _view_method("ravel")
    transpose = _view_method("transpose")
    swapaxes = _view_method("swapaxes")
    squeeze = _view_method("squeeze")
    diagonal = _view_method("diagonal")

    # ------------------------------------------------------------------ indexing
    def __getitem__(self, key):
        arrays = flatten_arrays(key if isinstance(key, tuple) else [key], [])
        check_current(arrays)
        if any(k.dtype == np.bool_ for k in arrays):   # a boolean mask: its count is needed on the host
            _graph.host_sync("cupy.ndarray.__getitem__ with a boolean mask")
        a, ukey = self._a, unwrap(key)
        try:
            return wrap(_graph.run("cupy.ndarray.__getitem__", lambda: a[ukey], [self, *arrays]), self._device_id)
        except IndexError as e:
            _raise_as_cupy(e)

    def __setitem__(self, key, value):
        arrays = flatten_arrays([key, value], []) + [self]
        check_current(arrays)
        a, ukey, uvalue = self._a, unwrap(key), unwrap(value)

        def assign():
            a[ukey] = uvalue
        try:
            _graph.run("cupy.ndarray.__setitem__", assign, arrays, writes=True)
        except IndexError as e:
            _raise_as_cupy(e)

    # ------------------------------------------------------------------ NumPy's protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        proxy = getattr(_scp(), ufunc.__name__, None)
        if proxy is None:
            return NotImplemented
        return (proxy if method == "__call__" else getattr(proxy, method))(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        module = func.__module__ or "numpy"
        sub = next((s for s in ("linalg", "fft", "random") if f".{s}" in module), None)
        target = getattr(_scp(), sub) if sub else _scp()
        try:
            impl = getattr(target, func.__name__)
        except AttributeError:
            return NotImplemented
        return impl(*args, **kwargs)


for _name in ("fill", "sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "all", "any",
              "cumsum", "cumprod", "clip", "round", "dot", "nonzero", "take", "put", "repeat", "sort", "argsort",
              "partition", "argpartition", "conj", "conjugate", "flatten", "searchsorted", "trace", "choose",
              "compress", "ptp", "byteswap"):
    setattr(ndarray, _name, _method(_name))

for _name, _ufunc in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "true_divide"),
                      ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "power"), ("and", "bitwise_and"),
                      ("or", "bitwise_or"), ("xor", "bitwise_xor"), ("lshift", "left_shift"),
                      ("rshift", "right_shift"), ("matmul", "matmul"), ("divmod", "divmod")):
    setattr(ndarray, f"__{_name}__", _operator(_ufunc))
    setattr(ndarray, f"__r{_name}__", _operator(_ufunc, reflected=True))
    if _name not in ("matmul", "divmod"):
        setattr(ndarray, f"__i{_name}__", _inplace(_ufunc))

for _name, _ufunc in (("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"),
                      ("gt", "greater"), ("ge", "greater_equal")):
    setattr(ndarray, f"__{_name}__", _operator(_ufunc))

ndarray.__neg__ = lambda self: _scp().negative(self)
ndarray.__pos__ = lambda self: _scp().positive(self)
ndarray.__abs__ = lambda self: _scp().absolute(self)
ndarray.__invert__ = lambda self: _scp().invert(self)
