"""DLPack: zero-copy exchange with NumPy and PyTorch (and CuPy on a GPU)."""
import gc

import numpy as np
import pytest

import gputorch
from gputorch.utils import dlpack as gdlpack


def test_from_dlpack_numpy_shares_memory():
    a = np.arange(6.0).reshape(2, 3)
    t = gputorch.from_dlpack(a)
    assert t.shape == (2, 3) and t.dtype is gputorch.float64 and t.device.type == "cpu"
    a[0, 0] = 42
    assert t.tolist()[0][0] == 42
    t._data[1, 1] = -1
    assert a[1, 1] == -1
    assert t.data_ptr() == a.ctypes.data


@pytest.mark.parametrize("np_dtype", [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32,
                                      np.int64, np.uint8, np.bool_])
def test_dlpack_dtypes_round_trip_numpy(np_dtype):
    a = (np.arange(4) % 2).astype(np_dtype)
    t = gputorch.from_dlpack(a)
    assert t.dtype.np == np.dtype(np_dtype)
    back = np.from_dlpack(t)
    assert back.dtype == np_dtype and back.ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(back, a)


def test_numpy_consumes_gputorch_tensor_writably():
    t = gputorch.zeros(3)
    a = np.from_dlpack(t)
    a[1] = 5                       # a versioned (writable) capsule, not a read-only legacy one
    assert t.tolist() == [0.0, 5.0, 0.0]
    assert t.__dlpack_device__()[0] == 1


def test_non_contiguous_views_keep_strides():
    base = np.arange(12.0).reshape(3, 4)
    t = gputorch.from_dlpack(base[:, 1::2])
    assert t.shape == (3, 2) and t.tolist() == [[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]]
    base[2, 3] = 0
    assert t.tolist()[2][1] == 0


def test_torch_round_trip_shares_memory():
    torch = pytest.importorskip("torch")
    g = gputorch.arange(6, dtype=gputorch.float32)
    tt = torch.from_dlpack(g)
    assert tt.dtype == torch.float32 and tt.shape == (6,)
    tt[0] = 100
    assert g.tolist()[0] == 100
    g._data[1] = -7
    assert tt[1].item() == -7
    back = gputorch.from_dlpack(tt)
    back._data[2] = 55
    assert tt[2].item() == 55 and g.tolist()[2] == 55


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool", "float16"])
def test_torch_tensors_to_gputorch(dtype):
    torch = pytest.importorskip("torch")
    src = torch.ones(2, 3, dtype=getattr(torch, dtype))
    t = gputorch.from_dlpack(src)
    assert t.dtype is getattr(gputorch, dtype) and t.shape == (2, 3)
    assert t.data_ptr() == src.data_ptr()
    assert gputorch.from_dlpack(src.t()).tolist() == src.t().tolist()


def test_capsules_from_to_dlpack():
    torch = pytest.importorskip("torch")
    g = gputorch.tensor([1.0, 2.0, 3.0])
    capsule = gdlpack.to_dlpack(g)
    tt = torch.utils.dlpack.from_dlpack(capsule)
    tt[0] = 9
    assert g.tolist()[0] == 9
    src = torch.arange(4, dtype=torch.int32)
    back = gdlpack.from_dlpack(torch.utils.dlpack.to_dlpack(src))
    assert back.dtype is gputorch.int32 and back.tolist() == [0, 1, 2, 3]
    back._data[3] = 30                 # writable and shared
    assert src[3].item() == 30
    del back
    gc.collect()
    assert src.tolist() == [0, 1, 2, 30]


def test_capsule_consumed_once():
    capsule = gdlpack.to_dlpack(gputorch.ones(2))
    gdlpack.from_dlpack(capsule)
    with pytest.raises(RuntimeError, match="consumed"):
        gdlpack.from_dlpack(capsule)


def test_dlpack_own_tensor_and_errors():
    t = gputorch.ones(2)
    same = gputorch.from_dlpack(t)
    assert same.data_ptr() == t.data_ptr()
    with pytest.raises(TypeError, match="__dlpack__"):
        gputorch.from_dlpack([1, 2])
    with pytest.raises(BufferError, match="require gradient"):
        gputorch.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(TypeError):
        gdlpack.to_dlpack(np.zeros(2))


def test_zero_dim_and_empty():
    torch = pytest.importorskip("torch")
    s = gputorch.from_dlpack(torch.tensor(3.5))
    assert s.shape == () and s.item() == 3.5
    e = gputorch.from_dlpack(np.zeros((0, 3), dtype=np.float32))
    assert e.shape == (0, 3)
    assert torch.from_dlpack(gputorch.zeros(0, 2)).shape == (0, 2)


def test_cuda_dlpack_without_cuda_raises_runtime_error():
    if gputorch.cuda.is_available():
        pytest.skip("CUDA is available")

    class FakeCudaArray:
        def __dlpack__(self, **kwargs):
            raise AssertionError("must not be consumed")

        def __dlpack_device__(self):
            return (2, 0)
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        gputorch.from_dlpack(FakeCudaArray())


def test_cuda_dlpack_round_trip(device):
    if device != "cuda":
        pytest.skip("needs CUDA")
    if __import__("os").environ.get("GPUTORCH_SIMULATE_CUDA"):
        pytest.skip("needs a real GPU: the simulated device's memory is host memory, which CuPy cannot import")
    cp = pytest.importorskip("cupy")
    g = gputorch.arange(4, dtype=gputorch.float32, device=device)
    c = cp.from_dlpack(g)
    c[0] = 11
    assert g.tolist()[0] == 11
    back = gputorch.from_dlpack(c)
    assert back.device == g.device and back.data_ptr() == g.data_ptr()
