"""PyTorch's backend flag namespaces: settable, readable, checked as in PyTorch, no effect."""
import subprocess
import sys
import warnings

import pytest

import gputorch
from gputorch.backends import cuda as cuda_flags, cudnn


@pytest.fixture
def restore_flags():
    saved = dict(cudnn._state)
    precision = gputorch.get_float32_matmul_precision()
    yield
    cudnn._state.update(saved)
    cuda_flags.matmul.float32_matmul_precision = precision


def test_cudnn_defaults_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(gputorch.backends.cudnn, name) == getattr(torch.backends.cudnn, name), name
    assert gputorch.backends.cudnn.is_available() is False
    assert gputorch.backends.cudnn.version() is None


def test_cudnn_flags_set_and_read(restore_flags):
    b = gputorch.backends.cudnn
    b.benchmark = True
    b.deterministic = True
    b.enabled = False
    b.allow_tf32 = False
    assert (b.benchmark, b.deterministic, b.enabled, b.allow_tf32) == (True, True, False, False)
    with b.flags(enabled=True, benchmark=False):
        assert b.enabled is True and b.benchmark is False
    assert b.enabled is False and b.benchmark is True
    with pytest.raises(RuntimeError, match="set_benchmark_cudnn expects a bool, but got int"):
        b.benchmark = 1
    with pytest.raises(AttributeError):
        b.no_such_flag


def test_cuda_matmul_flags_tied_to_precision(restore_flags):
    torch = pytest.importorskip("torch")
    m = gputorch.backends.cuda.matmul
    assert m.allow_tf32 == torch.backends.cuda.matmul.allow_tf32 == False  # noqa: E712
    assert m.allow_fp16_reduced_precision_reduction is True
    m.allow_tf32 = True
    assert gputorch.get_float32_matmul_precision() == "high"
    gputorch.set_float32_matmul_precision("highest")
    assert m.allow_tf32 is False
    gputorch.set_float32_matmul_precision("medium")
    assert m.allow_tf32 is True and gputorch.get_float32_matmul_precision() == "medium"
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        m.foo = 1
    with pytest.raises(RuntimeError, match="expects a bool"):
        m.allow_tf32 = "yes"


def test_matmul_precision_validation(restore_flags):
    with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
        gputorch.set_float32_matmul_precision("fast")
    assert gputorch.get_float32_matmul_precision() == "highest"
    with pytest.raises(RuntimeError, match="set_float32_matmul_precision expects a str, but got int"):
        gputorch.set_float32_matmul_precision(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gputorch.set_float32_matmul_precision("high")
    assert gputorch.get_float32_matmul_precision() == "high"


def test_sdp_switches():
    c = gputorch.backends.cuda
    assert c.flash_sdp_enabled() and c.math_sdp_enabled() and c.mem_efficient_sdp_enabled()
    with c.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
        assert not c.flash_sdp_enabled() and not c.mem_efficient_sdp_enabled() and c.math_sdp_enabled()
    assert c.flash_sdp_enabled() and c.mem_efficient_sdp_enabled()
    c.enable_flash_sdp(False)
    assert c.flash_sdp_enabled() is False
    c.enable_flash_sdp(True)
    with pytest.raises(RuntimeError, match="expects a bool"):
        c.enable_math_sdp(3)
    assert c.is_flash_attention_available() is False


def test_mps_unavailable():
    assert gputorch.backends.mps.is_available() is False
    assert gputorch.backends.mps.is_built() is False


def test_flags_do_not_import_cupy():
    code = ("import sys, gputorch; gputorch.backends.cudnn.benchmark = True; "
            "gputorch.backends.cuda.matmul.allow_tf32 = True; gputorch.backends.cuda.is_built(); "
            "gputorch.backends.mps.is_available(); print('cupy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "False"
