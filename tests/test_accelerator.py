"""gputorch.accelerator: CUDA when present, else None/False/0 and RuntimeError as in PyTorch."""
import pytest

import gputorch


def test_without_accelerator(monkeypatch):
    monkeypatch.setattr(gputorch.cuda, "is_available", lambda: False)
    acc = gputorch.accelerator
    assert acc.is_available() is False
    assert acc.current_accelerator() is None
    assert acc.current_accelerator(check_available=True) is None
    assert acc.device_count() == 0
    for call in (acc.current_device_index, lambda: acc.set_device_index(0), acc.synchronize):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
            call()


def test_matches_torch_on_this_machine():
    torch = pytest.importorskip("torch")
    if gputorch.cuda.is_available() != torch.cuda.is_available():
        pytest.skip("gputorch and torch see different accelerators here")
    assert gputorch.accelerator.is_available() == torch.accelerator.is_available()
    assert gputorch.accelerator.device_count() == torch.accelerator.device_count()


def test_with_cuda():
    if not gputorch.cuda.is_available():
        pytest.skip("CUDA is not available")
    acc = gputorch.accelerator
    assert acc.is_available() is True
    assert acc.current_accelerator() == gputorch.device("cuda")
    assert acc.device_count() == gputorch.cuda.device_count()
    start = acc.current_device_index()
    last = acc.device_count() - 1
    try:
        acc.set_device_index(last)
        assert acc.current_device_index() == last == gputorch.cuda.current_device()
        acc.set_device_index(f"cuda:{start}")
        assert acc.current_device_index() == start
        acc.set_device_index(gputorch.device("cuda", last))
        assert acc.current_device_idx() == last
        acc.synchronize()
        acc.synchronize(0)
    finally:
        acc.set_device_index(start)
