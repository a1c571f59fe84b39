"""The simulated CuPy used for CUDA tests without a GPU: device tagging and checks."""
import numpy as np
import pytest

from gputorch.backends import simulated_cupy as scp


@pytest.fixture
def two_devices(monkeypatch):
    monkeypatch.setenv("GPUTORCH_SIMULATE_CUDA", "2")
    scp.cuda.runtime.setDevice(0)
    yield
    scp.cuda.runtime.setDevice(0)


def test_arrays_live_on_the_current_device(two_devices):
    a = scp.ones(3)
    assert isinstance(a, scp.ndarray) and a.device.id == 0
    with scp.cuda.Device(1):
        b = scp.arange(3.0)
        c = b * 2 + scp.exp(b)
        assert b.device.id == 1 and c.device.id == 1
        assert scp.cuda.runtime.getDevice() == 1
    assert scp.cuda.runtime.getDevice() == 0
    np.testing.assert_allclose(scp.asnumpy(c), np.arange(3.0) * 2 + np.exp(np.arange(3.0)))
    assert type(scp.asnumpy(c)) is np.ndarray


def test_ops_on_another_device_raise(two_devices):
    with scp.cuda.Device(1):
        b = scp.ones(2)
    with pytest.raises(ValueError, match="current device"):
        b + 1
    with pytest.raises(ValueError, match="current device"):
        scp.sum(b)


def test_views_and_methods_keep_the_device(two_devices):
    with scp.cuda.Device(1):
        b = scp.ones((2, 3))
        assert b.T.device.id == 1 and b.reshape(6).device.id == 1 and b.astype("float32").device.id == 1
        assert scp.asarray(b) is b
    moved = scp.asarray(b)  # copy onto device 0
    assert moved.device.id == 0


def test_invalid_device(two_devices):
    with pytest.raises(RuntimeError, match="invalid device"):
        scp.cuda.runtime.setDevice(2)


# --- as strict as CuPy: only CuPy's names and keywords, device arrays that are not NumPy arrays ---

import operator  # noqa: E402

from gputorch.backends import simulated_cupy_api  # noqa: E402


def test_only_cupys_names_are_offered(two_devices):
    assert "errstate" not in simulated_cupy_api.NAMES and "insert" not in simulated_cupy_api.NAMES
    for name in ("errstate", "insert", "geomspace", "nanpercentile", "matrix", "datetime64", "no_such_thing"):
        with pytest.raises(AttributeError, match=f"'{name}'|cupy.{name}"):
            getattr(scp, name)
    with pytest.raises(AttributeError):
        scp.linalg.matrix_norm           # NumPy 2 has it, CuPy's linalg does not
    assert scp.linalg.solve.__qualname__ == "cupy.linalg.solve"
    for name in ("exp", "add", "where", "einsum", "float32", "inf", "newaxis", "iinfo"):
        assert name in simulated_cupy_api.NAMES
        getattr(scp, name)


def test_keywords_are_cupys(two_devices):
    a = scp.arange(4.0)
    with pytest.raises(TypeError, match=r"cupy.clip\(\).*a_min"):
        scp.clip(a, min=0, max=1)        # NumPy 2 spells them min/max; CuPy only a_min/a_max
    np.testing.assert_array_equal(scp.clip(a, 1, 2).get(), [1, 1, 2, 2])
    with pytest.raises(TypeError, match="Wrong arguments"):
        scp.exp(a, where=a > 1)          # CuPy's ufuncs take out, dtype, casting only
    with pytest.raises(TypeError, match="initial"):
        scp.add.reduce(a, initial=1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'mode'"):
        scp.take(a, scp.asarray([0]), mode="clip")
    assert float(scp.add.reduce(a)) == 6.0
    assert scp.sum(a, axis=0, keepdims=True).shape == (1,)


def test_python_scalars_follow_cupys_dtype_rules(two_devices):
    f32, i32 = scp.ones(3, dtype=scp.float32), scp.ones(3, dtype=scp.int32)
    assert (f32 * 2.0).dtype == np.float32 and (2.5 + f32).dtype == np.float32
    assert (i32 + 1).dtype == np.int32 and (i32 * 1.5).dtype == np.float64
    assert (scp.ones(2, dtype=bool) + 1).dtype == np.int64
    assert scp.asarray(1.0).dtype == np.float64 and scp.asarray(1).dtype == np.int64
    # results are device arrays, never host scalars: reductions, elements, ops on 0-d arrays
    for value in (scp.sum(f32), f32.max(), f32[1], scp.exp(f32[0]), f32[0] + 1):
        assert type(value) is scp.ndarray and value.shape == () and value.device.id == 0
    assert float(scp.sum(f32)) == 3.0 and scp.sum(f32).dtype == np.float32


def test_device_arrays_are_not_numpy_arrays(two_devices):
    a = scp.arange(6.0).reshape(2, 3)
    assert not isinstance(a, np.ndarray)
    for to_host in (np.asarray, np.array, lambda x: np.ascontiguousarray(x, dtype=np.float32)):
        with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
            to_host(a)
    with pytest.raises(TypeError):
        float(a)                           # more than one element
    with pytest.raises(TypeError):
        int(a[0])
    with pytest.raises(TypeError):
        operator.index(scp.asarray(3))      # CuPy's arrays have no __index__
    assert float(a[1, 2]) == 5.0 and int(scp.asarray(7)) == 7 and bool(scp.asarray([1]))
    # the ways out
    host = a.get()
    assert type(host) is np.ndarray and host.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert type(scp.asnumpy(a)) is np.ndarray and (scp.asnumpy(a) == host).all()
    assert a.tolist() == host.tolist() and a[1, 1].item() == 4.0


def test_host_arrays_do_not_mix_into_device_ops(two_devices):
    a, host = scp.ones(3), np.ones(3)
    for op in (lambda: a + host, lambda: host + a, lambda: a * np.float64(2) + np.ones(1),
               lambda: scp.add(a, host), lambda: scp.concatenate([a, host]), lambda: scp.where(a > 0, a, host),
               lambda: np.concatenate([a, host])):
        with pytest.raises(TypeError, match="numpy.ndarray"):
            op()
    a += 1
    a[0] = 5.0
    np.testing.assert_array_equal(a.get(), [5, 2, 2])
    np.testing.assert_array_equal((a + scp.asarray(host)).get(), [6, 3, 3])   # moved explicitly: fine


def test_numpy_functions_dispatch_to_the_device(two_devices):
    with scp.cuda.Device(1):
        a = scp.arange(4.0)
        s, e, c = np.sum(a), np.exp(a), np.concatenate([a, a])
        assert all(type(x) is scp.ndarray and x.device.id == 1 for x in (s, e, c))
        assert float(s) == 6.0 and c.shape == (8,)
    with pytest.raises(ValueError, match="current device"):
        np.exp(a)
    with pytest.raises(TypeError):
        np.insert(a, 0, 1.0)               # no CuPy implementation


def test_ndarray_offers_only_cupys_attributes():
    ours = {n for n in dir(scp.ndarray) if not n.startswith("_") or (
        n.startswith("__") and n.endswith("__") and n not in dir(object))}
    ours -= {"__dict__", "__weakref__", "__module__", "__slots__"}
    extra = sorted(ours - set(simulated_cupy_api.NDARRAY))
    assert not extra, f"the simulated ndarray has attributes cupy.ndarray lacks: {extra}"
    for name in ("get", "set", "data", "device", "astype", "reshape", "view", "copy", "T", "flags", "strides",
                 "__dlpack__", "__cuda_array_interface__", "__array_function__", "__array_ufunc__"):
        assert name in ours, name
    assert "__index__" not in ours and "ctypes" not in ours and "__array_interface__" not in ours


def test_views_share_one_base_and_copies_land_on_the_current_device(two_devices):
    a = scp.arange(6.0)
    v = a.reshape(2, 3)
    assert a.base is None and v.base is a and v[1:].base is a and v.T.base is a and scp.reshape(a, (3, 2)).base is a
    v[1, 2] = 50.0
    assert a[5].item() == 50.0                      # a view writes through to its base
    with scp.cuda.Device(1):
        c = a.copy()                                # CuPy: copy reads another device, lands on the current one
        assert c.device.id == 1 and c.get().tolist() == [0, 1, 2, 3, 4, 50]
        with pytest.raises(ValueError, match="current device"):
            a.fill(1.0)                             # a kernel on device 1 cannot write device 0's array
        with pytest.raises(ValueError, match="current device"):
            a.sum()
        assert a.T.device.id == 0                   # views are metadata: no kernel, no device check


def test_get_array_module_tells_device_from_host(two_devices):
    assert scp.get_array_module(np.ones(2), 1.0, scp.ones(2)) is scp
    assert scp.get_array_module(np.ones(2), 1.0) is np and scp.get_array_module() is np


def test_ndarray_methods_take_cupys_parameters(two_devices):
    a = scp.arange(5.0)
    for call, word in ((lambda: a.sum(where=a > 1), "where"), (lambda: a.max(initial=0.0), "initial"),
                       (lambda: a.sort(stable=True), "stable"), (lambda: a.take(scp.asarray([1]), mode="clip"), "mode"),
                       (lambda: a.argsort(stable=True), "stable")):
        with pytest.raises(TypeError, match=f"cupy.ndarray.*'{word}'"):
            call()
    with pytest.raises(TypeError):
        a.item(0)                          # CuPy's item() takes no index
    assert a[2].item() == 2.0 and float(a.sum(axis=0, keepdims=True)[0]) == 10.0
    assert a.reshape(5, 1).shape == (5, 1) and a.reshape((1, 5), order="F").shape == (1, 5)
