"""The simulated CuPy's RawModule/RawKernel (kernels run on the CPU harness), its memory pool
counters, memGetInfo, and streams/events."""
import numpy as np
import pytest

from gputorch.backends import simulated_cupy as cp
from gputorch.cuda.harness import toolchain_problem

SOURCE = r"""
extern "C" __global__ void scale(float* x, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
// Multi-tensor style: a table of pointers and sizes.
extern "C" __global__ void fill_all(float* const* ptrs, const long long* sizes, float value) {
    float* p = ptrs[blockIdx.x];
    for (long long i = threadIdx.x; i < sizes[blockIdx.x]; i += blockDim.x) p[i] = value + blockIdx.x;
}
template <typename T>
__global__ void add_one(T* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += T(1);
}
"""


@pytest.fixture
def two_devices(monkeypatch):
    monkeypatch.setenv("GPUTORCH_SIMULATE_CUDA", "2")
    cp.cuda.runtime.setDevice(0)
    yield
    cp.cuda.runtime.setDevice(0)


needs_compiler = pytest.mark.skipif(toolchain_problem() is not None, reason=f"harness: {toolchain_problem()}")


@pytest.fixture(scope="module")
def module():
    if toolchain_problem():
        pytest.skip(f"harness: {toolchain_problem()}")
    return cp.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=["add_one<float>", "add_one<int>"])


@needs_compiler
def test_raw_kernel_on_device_arrays(two_devices, module):
    x = cp.arange(1000, dtype=cp.float32)
    module.get_function("scale")((4,), (256,), (x, np.float32(3), np.int64(1000)))
    assert isinstance(x, cp.ndarray)
    np.testing.assert_array_equal(cp.asnumpy(x), 3 * np.arange(1000, dtype=np.float32))
    with cp.cuda.Device(1):
        y = cp.ones(10, dtype=cp.int32)
        module.get_function("add_one<int>")(1, 32, (y, np.int32(10)))
        assert (cp.asnumpy(y) == 2).all()


@needs_compiler
def test_raw_kernel_constructor(two_devices):
    k = cp.RawKernel(SOURCE, "scale")
    x = cp.ones(5, dtype=cp.float32)
    k((1,), (32,), (x, np.float32(-2), np.int64(5)))
    assert (cp.asnumpy(x) == -2).all()


@needs_compiler
def test_arrays_must_be_on_the_current_device(two_devices, module):
    with cp.cuda.Device(1):
        y = cp.ones(10, dtype=cp.float32)
    with pytest.raises(ValueError, match=r"kernel 'scale': argument 0 is an array on device 1, but the kernel runs on "
                                         r"the current device 0"):
        module.get_function("scale")(1, 32, (y, np.float32(2), np.int64(10)))
    with cp.cuda.Device(1):
        module.get_function("scale")(1, 32, (y, np.float32(2), np.int64(10)))
    assert (cp.asnumpy(y) == 2).all()


@needs_compiler
def test_host_arrays_are_rejected_like_cupy(two_devices, module):
    with pytest.raises(TypeError, match=r"kernel 'scale': argument 0: you are trying to pass a numpy.ndarray of shape "
                                        r"\(10,\)"):
        module.get_function("scale")(1, 32, (np.ones(10, np.float32), np.float32(2), np.int64(10)))
    x = cp.ones(3, dtype=cp.float32)
    module.get_function("scale")(1, 32, (x, np.array([4.0], np.float32), np.int64(3)))  # size one: by value
    assert (cp.asnumpy(x) == 4).all()


@needs_compiler
def test_scalar_types_are_checked(two_devices, module):
    x = cp.ones(3, dtype=cp.float32)
    with pytest.raises(TypeError, match=r"kernel 'scale': argument 1 'a' has C\+\+ type float.*numpy.float64"):
        module.get_function("scale")(1, 32, (x, np.float64(2), np.int64(3)))


@needs_compiler
def test_pointer_tables_from_data_ptr(two_devices, module):
    arrays = [cp.zeros(n, dtype=cp.float32) for n in (3, 300, 1)]
    assert arrays[1].data.ptr == arrays[1].__cuda_array_interface__["data"][0] != 0
    ptrs = cp.asarray(np.array([a.data.ptr for a in arrays], dtype=np.uint64))
    sizes = cp.asarray(np.array([a.size for a in arrays], dtype=np.int64))
    module.get_function("fill_all")(len(arrays), 128, (ptrs, sizes, np.float32(5)))
    for k, a in enumerate(arrays):
        assert (cp.asnumpy(a) == 5 + k).all()


@needs_compiler
def test_errors_have_cupy_names(two_devices, module):
    with pytest.raises(cp.cuda.compiler.CompileException, match=r"k.cu:1"):
        cp.RawModule(code='#line 1 "k.cu"\nextern "C" __global__ void k() { nope; }')
    with pytest.raises(cp.cuda.driver.CUDADriverError, match="CUDA_ERROR_INVALID_VALUE"):
        module.get_function("scale")(0, 32, (cp.ones(1, dtype=cp.float32), np.float32(1), np.int64(1)))
    with pytest.raises(cp.cuda.driver.CUDADriverError, match="named symbol not found"):
        module.get_function("missing")


@needs_compiler
def test_python_scalars_are_converted_like_cupy(two_devices, module):
    """CuPy puts a Python int in an int64 slot and a float in a float64 slot: right for ``long long`` and
    ``double`` parameters, a width mismatch (garbage on a GPU) for ``int`` and ``float`` ones."""
    x = cp.ones(6, dtype=cp.float32)
    module.get_function("scale")(1, 32, (x, np.float32(2), 4))          # Python int -> long long: fine
    np.testing.assert_array_equal(cp.asnumpy(x), [2, 2, 2, 2, 1, 1])
    with pytest.raises(TypeError, match=r"argument 1 'a' has C\+\+ type float.*numpy.float64"):
        module.get_function("scale")(1, 32, (x, 2.0, 6))                # Python float -> double slot
    with pytest.raises(TypeError, match=r"argument 2 'n' has C\+\+ type long long.*numpy.int32"):
        module.get_function("scale")(1, 32, (x, np.float32(2), np.int32(6)))  # numpy scalars keep their dtype
    y = cp.zeros(4, dtype=cp.int32)
    with pytest.raises(TypeError, match=r"argument 1 'n' has C\+\+ type int.*numpy.int64"):
        module.get_function("add_one<int>")(1, 32, (y, 4))              # Python int -> int64, not int
    with pytest.raises(TypeError, match=r"argument 1 'n' has C\+\+ type int.*numpy.int64"):
        module.get_function("add_one<int>")(1, 32, (y, True))           # bool is an int: int64 too
    with pytest.raises(TypeError, match="Unsupported type"):
        module.get_function("add_one<int>")(1, 32, (y, "4"))
    with pytest.raises(TypeError, match=r"argument 0 'x' has C\+\+ type int\*.*float32"):
        module.get_function("add_one<int>")(1, 32, (x, np.int32(4)))    # arrays are typed pointers
    module.get_function("add_one<int>")(1, 32, (y, np.int32(3)))
    np.testing.assert_array_equal(cp.asnumpy(y), [1, 1, 1, 0])


@needs_compiler
@pytest.mark.parametrize("grid, block, shared_mem", [
    ((2**31, 1, 1), (32, 1, 1), 0), ((1, 65536, 1), (32, 1, 1), 0), ((1, 1, 65536), (32, 1, 1), 0),
    (1, (1025, 1, 1), 0), (1, (1, 1025, 1), 0), (1, (1, 1, 65), 0), (1, (64, 32, 1), 0),
    (1, 32, 48 * 1024 + 1), (1, 32, -1)])
def test_launch_limits(two_devices, module, grid, block, shared_mem):
    x = cp.ones(1, dtype=cp.float32)
    with pytest.raises(cp.cuda.driver.CUDADriverError, match="CUDA_ERROR_INVALID_VALUE"):
        module.get_function("scale")(grid, block, (x, np.float32(2), np.int64(0)), shared_mem=shared_mem)
    assert cp.asnumpy(x)[0] == 1


@needs_compiler
def test_launch_at_the_limits_runs(two_devices, module):
    x = cp.ones(1, dtype=cp.float32)
    k = module.get_function("scale")
    k((1, 65535, 1), (32, 1, 1), (x, np.float32(2), np.int64(0)))       # n=0: every thread returns
    k(1, (1024, 1, 1), (x, np.float32(2), np.int64(1)), shared_mem=48 * 1024)
    k(1, (16, 1, 64), (x, np.float32(2), np.int64(0)))
    assert cp.asnumpy(x)[0] == 2.0   # only the second launch's thread 0 had an element
    k.max_dynamic_shared_size_bytes = 64 * 1024                       # opting in raises the limit
    k(1, 32, (x, np.float32(0.5), np.int64(1)), shared_mem=64 * 1024)
    assert cp.asnumpy(x)[0] == 1.0


def test_memory_pool_counts_live_arrays(two_devices):
    pool = cp.get_default_memory_pool()
    pool.free_all_blocks()
    used, total = pool.used_bytes(), pool.total_bytes()
    a = cp.ones(1000, dtype=cp.float32)          # 4000 bytes -> 4096 in the pool
    assert pool.used_bytes() - used == 4096 and pool.total_bytes() - total == 4096
    view = a[10:].reshape(-1)                     # views share the buffer
    b = a * 2
    assert pool.used_bytes() - used == 8192
    del a
    assert pool.used_bytes() - used == 8192       # the view keeps the buffer alive
    del view
    assert pool.used_bytes() - used == 4096
    assert pool.total_bytes() - total == 8192 and pool.n_free_blocks() == 1   # cached until freed
    c = cp.zeros(1024, dtype=cp.float32)          # same rounded size: reuses the cached block
    assert pool.n_free_blocks() == 0 and pool.total_bytes() - total == 8192
    del c
    pool.free_all_blocks()
    assert pool.total_bytes() - total == 4096 and pool.n_free_blocks() == 0
    with cp.cuda.Device(1):
        d = cp.ones(10)
        assert pool.used_bytes() >= 512          # device 1's pool
    del b, d


def test_mem_get_info_and_out_of_memory(two_devices, monkeypatch):
    monkeypatch.setenv("GPUTORCH_SIMULATE_CUDA_MEMORY", "64M")
    pool = cp.get_default_memory_pool()
    pool.free_all_blocks()
    free, total = cp.cuda.runtime.memGetInfo()
    assert total == 64 << 20 and free == total - pool.total_bytes()
    a = cp.zeros(16 << 20, dtype=cp.uint8)
    free2, _ = cp.cuda.runtime.memGetInfo()
    assert free - free2 == 16 << 20
    with pytest.raises(cp.cuda.memory.OutOfMemoryError, match=r"Out of memory allocating 67,108,864 bytes"):
        cp.zeros(64 << 20, dtype=cp.uint8)
    assert isinstance(cp.cuda.memory.OutOfMemoryError(1, 2), MemoryError)
    del a


def test_streams_and_events_are_no_ops(two_devices):
    s = cp.cuda.Stream(non_blocking=True)
    assert cp.cuda.get_current_stream() == cp.cuda.Stream.null
    with s:
        assert cp.cuda.get_current_stream() is s
        start = s.record()
        x = cp.ones(3) + 1
        end = cp.cuda.Event()
        end.record()
    s.synchronize()
    end.synchronize()
    assert cp.cuda.get_current_stream() == cp.cuda.Stream.null
    assert cp.cuda.get_elapsed_time(start, end) >= 0 and (cp.asnumpy(x) == 2).all()
