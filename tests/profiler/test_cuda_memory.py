"""``gputorch.cuda`` memory API (CuPy's pool; the simulated one here) and the profiler's GPU views."""
import gc

import pytest

import gputorch
import gputorch.nn.functional as F
from gputorch.backends import cuda as cuda_backend
from gputorch.profiler import MemoryProfiler
from tests.profiler._workloads import batch, mlp

NEEDS_CUDA = pytest.mark.skipif(not gputorch.cuda.is_available(), reason="CUDA (real or simulated) is not available")
API = ["memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
       "reset_peak_memory_stats", "mem_get_info", "memory_stats", "memory_summary"]


def _rounded(n):
    return -(-n // 512) * 512


@pytest.fixture
def no_cuda(monkeypatch):
    backend = cuda_backend.BACKEND
    for name, value in (("_probed", False), ("_cupy", None), ("_reason", None), ("xp", None),
                        ("array_type", None)):
        monkeypatch.setattr(backend, name, value)
    monkeypatch.setattr(cuda_backend, "_load_cupy", lambda: (None, "CuPy is not installed (No module named 'cupy')"))


@pytest.mark.parametrize("name", API)
def test_without_cuda_the_api_raises(no_cuda, name):
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        getattr(gputorch.cuda, name)()


def test_without_cuda_empty_cache_does_nothing(no_cuda):
    assert gputorch.cuda.empty_cache() is None


def test_api_is_exported():
    for name in API + ["empty_cache"]:
        assert getattr(gputorch.cuda, name) is getattr(gputorch.cuda.memory, name)
        assert name in gputorch.cuda.__all__


@NEEDS_CUDA
def test_allocated_reserved_and_peaks():
    gc.collect()
    cuda = gputorch.cuda
    base = cuda.memory_allocated()
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == base
    a = gputorch.empty(1000, device="cuda")            # 4000 B, a 4096 B block
    assert cuda.memory_allocated() - base == 4096
    b = gputorch.empty(300, device="cuda:0")           # 1200 B, 1536 B
    assert cuda.memory_allocated() - base == 4096 + 1536
    assert cuda.max_memory_allocated() == base + 4096 + 1536
    del a, b
    assert cuda.memory_allocated() == base
    assert cuda.max_memory_allocated() == base + 4096 + 1536     # the peak stays
    assert cuda.memory_reserved() >= base + 4096 + 1536          # freed blocks stay cached
    assert cuda.max_memory_reserved() >= cuda.memory_reserved()
    cuda.empty_cache()
    assert cuda.memory_reserved() == cuda.memory_allocated() == base
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == base
    stats = cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == base
    assert stats["allocated_bytes.all.peak"] == base
    assert stats["reserved_bytes.all.current"] == base
    free, total = cuda.mem_get_info()
    assert 0 < free <= total
    text = cuda.memory_summary()
    assert "Allocated memory" in text and "Reserved memory" in text


@NEEDS_CUDA
def test_device_argument_forms():
    cuda = gputorch.cuda
    assert cuda.memory_allocated(0) == cuda.memory_allocated("cuda:0") == cuda.memory_allocated(gputorch.device("cuda"))
    with pytest.raises(ValueError, match="Expected a cuda device"):
        cuda.memory_allocated("cpu")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cuda.memory_allocated(cuda.device_count())


@NEEDS_CUDA
def test_allocator_and_tracked_views_agree_up_to_rounding():
    gc.collect()
    model = mlp("cuda")
    opt = gputorch.optim.Adam(model.parameters())
    with MemoryProfiler(model=model, optimizer=opt) as prof:     # sees every tensor alive, too
        for step in range(3):
            x, y = batch("cuda", seed=step)
            F.cross_entropy(model(x), y).backward()
            opt.step()
            opt.zero_grad()
        del x, y
        gc.collect()
    report = prof.report()
    view = report.views["cuda:0"]
    tracked = sum(report.current_by_device["cuda:0"].values())
    live = [r for r, _ in prof._final["live"] if r.device == "cuda:0"]
    assert tracked == sum(r.nbytes for r in live)
    # the pool hands every array a block rounded up to 512 B; nothing else is alive on the device
    assert view["allocator"]["used"] == sum(_rounded(r.nbytes) for r in live)
    assert 0 <= view["allocator"]["used"] - tracked < 512 * len(live)
    assert view["allocator"]["total"] >= view["allocator"]["used"]
    assert view["allocator"]["peak_used"] >= sum(report.by_device["cuda:0"].values())
    text = str(report)
    assert "three views" in text and "rounded up to a multiple of 512 B" in text and "cached" in text
    assert view["device"] is None or "total" in view["device"]      # NVML: not on the simulated device


@pytest.mark.skipif(gputorch.cuda.device_count() < 2, reason="needs two (real or simulated) GPUs")
def test_per_device_counters_and_empty_cache_on_every_used_gpu():
    cuda = gputorch.cuda
    gc.collect()
    before0, before1 = cuda.memory_allocated(0), cuda.memory_allocated(1)
    a = gputorch.empty(1024, device="cuda:1")                 # 4096 B on GPU 1 only
    assert cuda.memory_allocated(1) - before1 == 4096
    assert cuda.memory_allocated(0) == before0
    del a
    assert cuda.memory_reserved(1) >= cuda.memory_allocated(1) + 4096
    cuda.empty_cache()
    assert cuda.memory_reserved(1) == cuda.memory_allocated(1) == before1
