"""``gputorch.cuda``: behaviour without CUDA (clear RuntimeErrors) and, on the simulated CuPy
(``gputorch/backends/simulated_cupy.py``), device management and per-device RNG."""
import subprocess
import sys

import numpy as np
import pytest

import gputorch
from gputorch import random as grandom
from gputorch.backends import cuda as cuda_backend
from gputorch.backends.philox import PhiloxEngine
from gputorch.cuda.kernels import _module as kernel_module

NEEDS_NO_CUDA = pytest.mark.skipif(gputorch.cuda.is_available(), reason="CUDA is available here")


# ---------------------------------------------------------------- without CUDA
@pytest.fixture
def no_cuda(monkeypatch):
    """CUDA unavailable, whatever this machine has (CuPy reported missing)."""
    _reset_cuda_state(monkeypatch)
    monkeypatch.setattr(cuda_backend, "_load_cupy",
                        lambda: (None, "CuPy is not installed (No module named 'cupy')"))


def _reset_cuda_state(monkeypatch):
    backend = cuda_backend.BACKEND
    for name, value in (("_probed", False), ("_cupy", None), ("_reason", None), ("xp", None),
                        ("array_type", None)):
        monkeypatch.setattr(backend, name, value)
    for dev in set(gputorch.device._interned.values()):
        if dev.type == "cuda":
            monkeypatch.setattr(dev, "_backend", None)
            monkeypatch.setattr(dev, "_ctx", None)
    monkeypatch.setattr(grandom, "_device_generators", {})
    monkeypatch.setattr(grandom, "_seed_for_new", [None])
    # The kernels' module cache keeps the CuPy it compiled with: a simulated one must not outlive
    # the test (on a machine with a GPU, later kernels would get the simulated RawModule).
    monkeypatch.setitem(kernel_module._state, "cupy", None)
    monkeypatch.setattr(kernel_module, "_modules", {})
    monkeypatch.setattr(kernel_module, "_functions", {})


def test_queries_without_cuda(no_cuda):
    assert gputorch.cuda.is_available() is False
    assert gputorch.cuda.device_count() == 0
    assert gputorch.cuda.is_initialized() is False


@pytest.mark.parametrize("call", [
    lambda: gputorch.cuda.current_device(),
    lambda: gputorch.cuda.set_device(0),
    lambda: gputorch.cuda.synchronize(),
    lambda: gputorch.cuda.init(),
    lambda: gputorch.cuda.get_device_name(),
    lambda: gputorch.cuda.get_rng_state(),
    lambda: gputorch.cuda.get_rng_state_all() if gputorch.cuda.device_count() else gputorch.cuda.initial_seed(),
    lambda: gputorch.cuda.set_rng_state(gputorch.zeros(16, dtype=gputorch.uint8)),
    lambda: gputorch.tensor([1.0], device="cuda"),
    lambda: gputorch.tensor([1.0], device="cuda:1"),
    lambda: gputorch.zeros(2, device="cuda:1"),
    lambda: gputorch.ones(2, device=gputorch.device("cuda")),
    lambda: gputorch.arange(3, device="cuda"),
    lambda: gputorch.rand(2, device="cuda"),
    lambda: gputorch.randperm(3, device="cuda:0"),
    lambda: gputorch.ones(2).cuda(),
    lambda: gputorch.ones(2).cuda(1),
    lambda: gputorch.ones(2).to("cuda"),
    lambda: gputorch.Generator("cuda"),
    lambda: gputorch.as_tensor(np.zeros(2), device="cuda"),
    lambda: gputorch.cuda.device(0).__enter__(),
    lambda: gputorch.zeros(2).new_zeros(2, device="cuda"),
])
def test_gpu_apis_raise_clear_runtime_error(no_cuda, call):
    with pytest.raises(RuntimeError, match="CUDA is not available: CuPy is not installed"):
        call()


def test_seeding_without_cuda_is_a_no_op(no_cuda):
    gputorch.cuda.manual_seed(3)
    gputorch.cuda.manual_seed_all(3)
    gputorch.cuda.seed()
    gputorch.cuda.seed_all()
    assert gputorch.manual_seed(4).initial_seed() == 4
    with gputorch.cuda.device(None):
        pass
    with gputorch.cuda.device(-1):
        pass
    gputorch.cuda.set_device(-1)


def test_device_objects_need_no_cuda(no_cuda):
    d = gputorch.device("cuda:3")
    assert d.type == "cuda" and d.index == 3 and str(d) == "cuda:3"


@NEEDS_NO_CUDA
def test_no_cupy_import_without_cuda():
    code = ("import gputorch\n"
            "assert not gputorch.cuda.is_available()\n"
            "try:\n    gputorch.zeros(1, device='cuda')\n"
            "except RuntimeError as e:\n    print('ok', 'CUDA is not available' in str(e))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin"}).stdout.split()
    assert out[:2] == ["ok", "True"]


# ---------------------------------------------------------------- simulated CUDA
@pytest.fixture
def sim_cuda(monkeypatch):
    """Two simulated GPUs (NumPy arrays tagged with a device, CuPy-style device checks)."""
    _reset_cuda_state(monkeypatch)
    monkeypatch.setenv("GPUTORCH_SIMULATE_CUDA", "2")
    from gputorch.backends import simulated_cupy
    runtime = simulated_cupy.cuda.runtime
    monkeypatch.setattr(runtime, "_current", 0)
    monkeypatch.setattr(runtime, "getDeviceProperties",
                        lambda i: {"name": f"Simulated GPU {i}".encode(), "major": 9, "minor": 0},
                        raising=False)
    return simulated_cupy


def test_sim_queries(sim_cuda):
    assert gputorch.cuda.is_available() and gputorch.cuda.device_count() == 2
    assert gputorch.cuda.is_initialized()
    assert gputorch.cuda.current_device() == 0
    assert gputorch.cuda.get_device_name() == "Simulated GPU 0"
    assert gputorch.cuda.get_device_name(1) == "Simulated GPU 1"
    assert gputorch.cuda.get_device_capability("cuda:1") == (9, 0)
    gputorch.cuda.synchronize()
    gputorch.cuda.synchronize(1)
    gputorch.cuda.synchronize("cuda:0")


def test_sim_set_device(sim_cuda):
    gputorch.cuda.set_device(1)
    assert gputorch.cuda.current_device() == 1
    assert gputorch.zeros(2, device="cuda").device == gputorch.device("cuda:1")
    gputorch.cuda.set_device("cuda:0")
    assert gputorch.cuda.current_device() == 0
    gputorch.cuda.set_device(gputorch.device("cuda", 1))
    assert gputorch.cuda.current_device() == 1
    gputorch.cuda.set_device(-1)
    assert gputorch.cuda.current_device() == 1
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        gputorch.cuda.set_device(5)
    with pytest.raises(ValueError, match="Expected a cuda device"):
        gputorch.cuda.set_device("cpu")


def test_sim_device_context_manager(sim_cuda):
    for spec in (1, "cuda:1", gputorch.device("cuda", 1)):
        with gputorch.cuda.device(spec):
            assert gputorch.cuda.current_device() == 1
            t = gputorch.ones(2, device="cuda")
            assert t.device.index == 1
        assert gputorch.cuda.current_device() == 0
    with gputorch.cuda.device_of(t):
        assert gputorch.cuda.current_device() == 1
    with gputorch.cuda.device_of(gputorch.ones(1)):
        assert gputorch.cuda.current_device() == 0


def test_sim_factories_and_moves(sim_cuda):
    a = gputorch.tensor([1.0, 2.0], device="cuda:1")
    assert a.device == gputorch.device("cuda:1") and a.tolist() == [1.0, 2.0]
    assert a._data._device_id == 1
    b = gputorch.arange(3).cuda(1)
    assert b.device.index == 1 and b.tolist() == [0, 1, 2]
    assert gputorch.ones(2).cuda().device == gputorch.device("cuda:0")
    assert gputorch.eye(2, device="cuda:1")._data._device_id == 1
    assert gputorch.linspace(0, 1, 3, device="cuda:1").tolist() == [0.0, 0.5, 1.0]
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        gputorch.zeros(2, device="cuda:2")


def test_sim_repr_shows_device(sim_cuda):
    assert repr(gputorch.tensor([1.5], device="cuda:0")) == "tensor([1.5000], device='cuda:0')"
    t = gputorch.tensor([1, 2], device="cuda:1", dtype=gputorch.int32)
    assert repr(t) == "tensor([1, 2], device='cuda:1', dtype=gputorch.int32)"


def test_sim_default_generators_use_philox(sim_cuda):
    gputorch.cuda.manual_seed(11)
    assert gputorch.cuda.initial_seed() == 11
    x = gputorch.rand(5, device="cuda")
    expected = PhiloxEngine(11, xp=np).random((5,), np.float32)
    np.testing.assert_array_equal(x.cpu().numpy(), expected)
    state = gputorch.cuda.get_rng_state()
    assert state.dtype is gputorch.uint8 and state.shape == (16,) and state.device.type == "cpu"
    y = gputorch.randn(4, device="cuda")
    gputorch.cuda.set_rng_state(state)
    np.testing.assert_array_equal(gputorch.randn(4, device="cuda").cpu().numpy(), y.cpu().numpy())


def test_sim_manual_seed_seeds_every_gpu(sim_cuda):
    gputorch.manual_seed(5)          # before any CUDA generator exists: applies when they are made
    assert gputorch.cuda.initial_seed() == 5
    a0 = gputorch.rand(3, device="cuda:0")
    a1 = gputorch.rand(3, device="cuda:1")
    assert a0.tolist() == a1.tolist()     # same seed, same counter, same stream on each GPU
    assert a1._data._device_id == 1
    gputorch.cuda.manual_seed_all(5)
    assert gputorch.rand(3, device="cuda:1").tolist() == a1.tolist()
    states = gputorch.cuda.get_rng_state_all()
    assert len(states) == 2
    gputorch.cuda.seed_all()
    assert gputorch.cuda.initial_seed() != 5
    gputorch.cuda.set_rng_state_all(states)
    assert gputorch.cuda.initial_seed() == 5
    with gputorch.cuda.device(1):
        gputorch.cuda.manual_seed(9)
    assert gputorch.cuda.initial_seed() == 5
    assert grandom.default_generator_for(gputorch.device("cuda:1")).initial_seed() == 9


def test_sim_generators(sim_cuda):
    g = gputorch.Generator("cuda")
    assert g.device == gputorch.device("cuda:0")
    g.manual_seed(1)
    a = gputorch.randn(3, generator=g, device="cuda")
    g.manual_seed(1)
    assert gputorch.randn(3, generator=g, device="cuda").tolist() == a.tolist()
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        gputorch.rand(2, device="cuda", generator=gputorch.Generator())
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        gputorch.rand(2, generator=g)
    p = gputorch.randperm(10, generator=g, device="cuda:1")
    assert sorted(p.tolist()) == list(range(10)) and p._data._device_id == 1


def test_sim_sampling_on_second_gpu(sim_cuda):
    x = gputorch.empty(1000, device="cuda:1").normal_(1.0, 2.0)
    assert abs(x.cpu().numpy().mean() - 1) < 0.3
    m = gputorch.multinomial(gputorch.tensor([0.0, 1.0], device="cuda:1"), 4, replacement=True)
    assert m.tolist() == [1, 1, 1, 1] and m.device.index == 1
    r = gputorch.randint(0, 5, (100,), device="cuda:1")
    assert r.cpu().numpy().max() < 5


def test_sim_fork_rng(sim_cuda):
    gputorch.manual_seed(2)
    with gputorch.random.fork_rng(devices=[0]):
        gputorch.rand(4, device="cuda:0")
    after = gputorch.rand(4, device="cuda:0")
    gputorch.manual_seed(2)
    assert gputorch.rand(4, device="cuda:0").tolist() == after.tolist()
