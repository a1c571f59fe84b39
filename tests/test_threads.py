"""set_num_threads / get_num_threads (NumPy's BLAS pool through threadpoolctl, when installed) and
the inter-op pair: values, the warning without threadpoolctl, PyTorch's errors."""
import importlib
import warnings

import pytest

import gputorch
from gputorch import _threads


@pytest.fixture
def restore_threads():
    before = gputorch.get_num_threads()
    saved = dict(_threads._state)
    yield
    _threads._state.update(saved)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gputorch.set_num_threads(before)
    _threads._state.update(saved)


def test_set_num_threads_sizes_blas_pool(restore_threads):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    gputorch.set_num_threads(1)
    assert gputorch.get_num_threads() == 1
    blas = [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
    assert blas and all(n == 1 for n in blas)
    gputorch.set_num_threads(2)
    assert gputorch.get_num_threads() == 2


def test_without_threadpoolctl_records_and_warns_once(restore_threads, monkeypatch):
    monkeypatch.setattr(_threads.blas_threads, "pools", lambda: ())
    monkeypatch.setattr(_threads.blas_threads, "configured", lambda: None)
    _threads._state["warned"] = False
    with pytest.warns(RuntimeWarning, match="threadpoolctl"):
        gputorch.set_num_threads(3)
    assert gputorch.get_num_threads() == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gputorch.set_num_threads(1)   # the second call is silent
    assert gputorch.get_num_threads() == 1


def test_init_num_threads_keeps_the_pool():
    before = gputorch.get_num_threads()
    assert gputorch.init_num_threads() is None
    assert gputorch.get_num_threads() == before


def test_default_is_positive():
    assert gputorch.get_num_threads() >= 1
    assert isinstance(gputorch.get_num_interop_threads(), int) and gputorch.get_num_interop_threads() >= 1


@pytest.mark.parametrize("fn", ["set_num_threads", "set_num_interop_threads"])
def test_errors_match_torch(fn):
    f = getattr(gputorch, fn)
    for bad in (0, -1):
        with pytest.raises(RuntimeError, match=f"{fn} expects a positive integer"):
            f(bad)
    for bad, name in ((1.5, "float"), (True, "bool"), ("2", "str")):
        with pytest.raises(RuntimeError, match=f"{fn} expects an int, but got {name}"):
            f(bad)


def test_interop_threads_set_once(monkeypatch):
    monkeypatch.setitem(_threads._state, "interop", None)
    gputorch.set_num_interop_threads(3)
    assert gputorch.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        gputorch.set_num_interop_threads(4)


def test_importing_needs_no_threadpoolctl():
    for module in ("gputorch._threads", "gputorch.backends.blas_threads"):
        text = open(importlib.util.find_spec(module).origin).read()
        assert "\nimport threadpoolctl" not in text and "\nfrom threadpoolctl" not in text
