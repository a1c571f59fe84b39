"""Anomaly detection: NaN checks in backward that name the forward op that produced them."""
import warnings

import numpy as np
import pytest

import gputorch
from gputorch.autograd import Function, detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from tests._helpers import assert_close


class NanBackward(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        return g * float("nan")


class Boom(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        raise ValueError("boom in backward")


def leaf(values, device):
    return gputorch.tensor(values, dtype=gputorch.float64, device=device, requires_grad=True)


@pytest.fixture(autouse=True)
def _anomaly_off_after():
    yield
    assert not is_anomaly_enabled(), "a test left anomaly detection on"


def _messages(record):
    return [str(w.message) for w in record]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's own 0 * inf warning inside the op
def test_nan_from_builtin_op_names_forward_line(device):
    x = leaf([0.0, 1.0], device)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with detect_anomaly():
            y = x ** 0.5  # ANOMALY-SOURCE-LINE
            z = (y * 0).sum()
            with pytest.raises(RuntimeError, match=r"Function 'PowBackward0' returned nan values in its 0th output"):
                z.backward()
    msgs = _messages(record)
    assert any("Anomaly Detection has been enabled" in m for m in msgs)
    trace = [m for m in msgs if m.startswith("Error detected in PowBackward0")]
    assert len(trace) == 1
    assert "ANOMALY-SOURCE-LINE" in trace[0]
    assert "Traceback of forward call that caused the error" in trace[0]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_without_anomaly_nan_passes_silently(device):
    x = leaf([0.0, 1.0], device)
    ((x ** 0.5) * 0).sum().backward()
    assert np.isnan(x.grad.tolist()[0])


def test_nan_from_custom_function(device):
    x = leaf([1.0, 2.0], device)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with detect_anomaly():
            q = NanBackward.apply(x)  # CUSTOM-SOURCE-LINE
            with pytest.raises(RuntimeError, match="Function 'NanBackwardBackward' returned nan values"):
                q.sum().backward()
    trace = [m for m in _messages(record) if "Error detected in NanBackwardBackward" in m]
    assert trace and "CUSTOM-SOURCE-LINE" in trace[0]


def test_check_nan_false(device):
    x = leaf([1.0], device)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with detect_anomaly(check_nan=False):
            NanBackward.apply(x).backward()
    assert np.isnan(x.grad.item())


def test_exception_in_backward_prints_forward_trace(device):
    x = leaf([1.0], device)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with detect_anomaly():
            q = Boom.apply(x)  # BOOM-SOURCE-LINE
            with pytest.raises(ValueError, match="boom in backward"):
                q.backward()
    trace = [m for m in _messages(record) if "Error detected in BoomBackward" in m]
    assert trace and "BOOM-SOURCE-LINE" in trace[0]


def test_exception_without_anomaly_has_no_trace_warning(device):
    x = leaf([1.0], device)
    q = Boom.apply(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError):
            q.backward()


def test_graph_built_before_anomaly_still_checked(device):
    x = leaf([1.0], device)
    q = NanBackward.apply(x)
    with pytest.warns(UserWarning):
        with detect_anomaly():
            with pytest.raises(RuntimeError, match="returned nan values"):
                q.backward()


def test_set_detect_anomaly_function_and_context():
    assert not is_anomaly_enabled()
    set_detect_anomaly(True)
    try:
        assert is_anomaly_enabled()
    finally:
        set_detect_anomaly(False)
    assert not is_anomaly_enabled()
    with set_detect_anomaly(True):
        assert is_anomaly_enabled()
    assert not is_anomaly_enabled()


def test_detect_anomaly_as_decorator(device):
    @detect_anomaly()
    def run():
        return is_anomaly_enabled()

    with pytest.warns(UserWarning):
        assert run() is True
    assert not is_anomaly_enabled()


def test_anomaly_mode_normal_gradients_unchanged(device):
    x = leaf([1.0, 2.0], device)
    with pytest.warns(UserWarning):
        with detect_anomaly():
            (x * x).sum().backward()
    assert_close(x.grad, np.array([2.0, 4.0]))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_from_sqrt_of_zero_names_sqrt(device):
    if not hasattr(gputorch, "sqrt"):
        pytest.skip("gputorch.sqrt is not available yet")
    x = leaf([0.0, 4.0], device)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with detect_anomaly():
            y = gputorch.sqrt(x)  # SQRT-SOURCE-LINE
            with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in its 0th output"):
                (y * 0).sum().backward()
    trace = [m for m in _messages(record) if "Error detected in SqrtBackward0" in m]
    assert trace and "SQRT-SOURCE-LINE" in trace[0]
