"""Grad modes (no_grad, enable_grad, set_grad_enabled, inference_mode) and detach/.data."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import grad_mode
from tests._helpers import assert_close


def leaf(values, device):
    return gputorch.tensor(values, dtype=gputorch.float64, device=device, requires_grad=True)


def inference_enabled():
    return grad_mode.is_inference_mode_enabled()


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    yield
    assert gputorch.is_grad_enabled(), "a test left grad mode disabled"
    assert not inference_enabled()


# ---------------------------------------------------------------- context managers
def test_no_grad_context(device):
    x = leaf([1.0], device)
    with gputorch.no_grad():
        assert not gputorch.is_grad_enabled()
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None
    assert (x * 2).requires_grad


def test_enable_grad_inside_no_grad(device):
    x = leaf([1.0], device)
    with gputorch.no_grad():
        with gputorch.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad


def test_set_grad_enabled_function_and_context(device):
    x = leaf([1.0], device)
    gputorch.set_grad_enabled(False)
    try:
        assert not gputorch.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        gputorch.set_grad_enabled(True)
    with gputorch.set_grad_enabled(False):
        assert not gputorch.is_grad_enabled()
        with gputorch.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not gputorch.is_grad_enabled()
    assert gputorch.is_grad_enabled()
    with pytest.raises(TypeError):
        gputorch.set_grad_enabled(1)


def test_inference_mode_context(device):
    x = leaf([1.0], device)
    with gputorch.inference_mode():
        assert inference_enabled() and not gputorch.is_grad_enabled()
        assert not (x * 2).requires_grad
    with gputorch.inference_mode(False):
        assert not inference_enabled() and gputorch.is_grad_enabled()


def test_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with gputorch.no_grad():
            raise ValueError
    assert gputorch.is_grad_enabled()


# ---------------------------------------------------------------- decorators
def test_no_grad_decorator_with_and_without_parentheses():
    @gputorch.no_grad()
    def f():
        return gputorch.is_grad_enabled()

    @gputorch.no_grad
    def g():
        return gputorch.is_grad_enabled()

    assert f() is False and g() is False
    assert f.__name__ == "f"


def test_enable_grad_decorator():
    @gputorch.enable_grad()
    def f():
        return gputorch.is_grad_enabled()

    with gputorch.no_grad():
        assert f() is True
        assert not gputorch.is_grad_enabled()


def test_set_grad_enabled_decorator_does_not_change_mode_at_decoration():
    @gputorch.set_grad_enabled(False)
    def f():
        return gputorch.is_grad_enabled()

    assert gputorch.is_grad_enabled()
    assert f() is False
    assert gputorch.is_grad_enabled()


def test_inference_mode_decorator_forms():
    @gputorch.inference_mode()
    def f():
        return gputorch.is_grad_enabled(), inference_enabled()

    @gputorch.inference_mode
    def g():
        return gputorch.is_grad_enabled(), inference_enabled()

    @gputorch.inference_mode(False)
    def h():
        return gputorch.is_grad_enabled(), inference_enabled()

    assert f() == (False, True) and g() == (False, True)
    assert h() == (True, False)


def test_decorated_generator_mode_only_while_running():
    @gputorch.no_grad()
    def gen():
        for _ in range(3):
            yield gputorch.is_grad_enabled()

    it = gen()
    assert next(it) is False
    assert gputorch.is_grad_enabled()    # not leaked to the caller while suspended
    assert next(it) is False
    assert gputorch.is_grad_enabled()
    assert list(it) == [False]


def test_decorated_generator_send_throw_close():
    @gputorch.no_grad()
    def gen():
        received = yield "first"
        try:
            yield (received, gputorch.is_grad_enabled())
        except KeyError:
            yield ("caught", gputorch.is_grad_enabled())
        return "done"

    it = gen()
    assert next(it) == "first"
    assert it.send(5) == (5, False)
    assert it.throw(KeyError()) == ("caught", False)
    assert gputorch.is_grad_enabled()
    with pytest.raises(StopIteration) as stop:
        next(it)
    assert stop.value.value == "done"
    it2 = gen()
    next(it2)
    it2.close()
    assert gputorch.is_grad_enabled()


def test_decorator_on_method(device):
    class M:
        @gputorch.no_grad()
        def run(self, t):
            return t * 2

    y = M().run(leaf([1.0], device))
    assert not y.requires_grad


# ---------------------------------------------------------------- detach / .data
def test_detach_shares_storage_and_version_counter(device):
    v = leaf([1.0, 2.0], device)
    d = v.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    with gputorch.no_grad():
        v.mul_(2)
    assert d._version == v._version == 1
    assert_close(d, np.array([2.0, 4.0]))
    d.add_(1)   # detach()'s result may be modified; autograd sees the version bump
    assert v._version == 2
    assert_close(v.detach(), np.array([3.0, 5.0]))


def test_detach_then_inplace_invalidates_saved_tensor(device):
    x = leaf([1.0, 2.0], device)
    a = x * 1
    y = a * a
    a.detach().add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_data_shares_storage_but_not_version_counter(device):
    v = leaf([1.0, 2.0], device)
    dd = v.data
    assert not dd.requires_grad
    dd.add_(1)
    assert_close(v.detach(), np.array([2.0, 3.0]))
    assert v._version == 0 and dd._version == 1
    # so .data changes are invisible to autograd's checks
    a = v * 1
    y = a * a
    a.data.mul_(0)
    y.sum().backward()   # no error (the gradient uses the modified values)
    assert_close(v.grad, np.zeros(2))


def test_data_setter(device):
    v = leaf([1.0, 2.0], device)
    v.data = gputorch.tensor([5.0, 6.0], dtype=gputorch.float64, device=device)
    assert v.requires_grad and v.is_leaf
    (v * v).sum().backward()
    assert_close(v.grad, np.array([10.0, 12.0]))


def test_detach_in_place(device):
    x = leaf([1.0], device)
    y = x * 2
    y.detach_()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_detach_blocks_gradient(device):
    x = leaf([1.0, 2.0], device)
    y = x * x
    z = y.detach() * x + y
    z.sum().backward()
    assert_close(x.grad, np.array([1.0, 4.0]) + np.array([2.0, 4.0]))


def test_parity_detach_and_data_versions_with_torch():
    torch = pytest.importorskip("torch")

    def run(lib, v):
        d, dd = v.detach(), v.data
        with lib.no_grad():
            v.mul_(2)
        d.add_(1)
        dd.add_(1)
        return v._version, d._version, dd._version, v.tolist()

    g = run(gputorch, gputorch.tensor([1.0, 2.0], requires_grad=True))
    t = run(torch, torch.tensor([1.0, 2.0], requires_grad=True))
    assert g == t
