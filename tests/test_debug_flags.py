"""The process-wide switches of gputorch/_debug_flags.py: deterministic algorithms, anomaly
detection (wired to autograd's), warn-always and flush-denormal, as PyTorch reports them."""
import pytest

import gputorch


@pytest.fixture(autouse=True)
def _restore():
    yield
    gputorch.use_deterministic_algorithms(False)
    gputorch.set_anomaly_enabled(False)
    gputorch.set_warn_always(False)


def test_deterministic_switch_and_debug_mode():
    assert not gputorch.are_deterministic_algorithms_enabled() and gputorch.get_deterministic_debug_mode() == 0
    gputorch.use_deterministic_algorithms(True, warn_only=True)
    assert gputorch.are_deterministic_algorithms_enabled() and gputorch.is_deterministic_algorithms_warn_only_enabled()
    assert gputorch.get_deterministic_debug_mode() == 1
    gputorch.set_deterministic_debug_mode("error")
    assert gputorch.get_deterministic_debug_mode() == 2 and not gputorch.is_deterministic_algorithms_warn_only_enabled()
    gputorch.set_deterministic_debug_mode(0)
    assert not gputorch.are_deterministic_algorithms_enabled()
    with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`, but got x"):
        gputorch.set_deterministic_debug_mode("x")
    with pytest.raises(RuntimeError, match="expected 0, 1, or 2, but got 3"):
        gputorch.set_deterministic_debug_mode(3)
    with pytest.raises(TypeError, match="must be str or int"):
        gputorch.set_deterministic_debug_mode(1.5)
    with pytest.raises(TypeError, match="must be bool, not int"):
        gputorch.use_deterministic_algorithms(1)


def test_anomaly_switch_is_autograds():
    assert not gputorch.is_anomaly_enabled() and gputorch.is_anomaly_check_nan_enabled()
    gputorch.set_anomaly_enabled(True, False)
    assert gputorch.autograd.anomaly_mode.is_anomaly_enabled() and not gputorch.is_anomaly_check_nan_enabled()
    gputorch.set_anomaly_enabled(True)
    x = gputorch.tensor([-1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="returned nan values"), pytest.warns(UserWarning, match="Error detected"):
        x.sqrt().sum().backward()
    gputorch.set_anomaly_enabled(False)
    assert not gputorch.is_anomaly_enabled() and gputorch.is_anomaly_check_nan_enabled()


def test_warn_always_and_flush_denormal():
    assert not gputorch.is_warn_always_enabled()
    gputorch.set_warn_always(True)
    assert gputorch.is_warn_always_enabled()
    with pytest.raises(RuntimeError, match="expects a bool, but got NoneType"):
        gputorch.set_warn_always(None)
    assert gputorch.set_flush_denormal(True) is False      # not supported: denormals stay
    assert float(gputorch.tensor([1e-40])) != 0.0
    assert gputorch.set_flush_denormal(False) is True
