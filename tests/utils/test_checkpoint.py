"""utils.checkpoint: same gradients as without checkpointing (dropout included), activations not kept."""
import warnings

import pytest

import gputorch
import gputorch.nn.functional as F
from gputorch import nn
from gputorch.autograd.graph import saved_tensors_hooks
from gputorch.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential
from tests._helpers import assert_close

VARIANTS = [pytest.param(False, id="non_reentrant"), pytest.param(True, id="reentrant")]


def segment(x, w):
    """A few ops that save tensors for backward, with dropout in the middle."""
    h = (x @ w).tanh()
    h = F.dropout(h, 0.5, training=True)
    return (h * h).exp().sin()


def _inputs(device, seed=0):
    gputorch.manual_seed(seed)
    x = gputorch.randn(4, 5, dtype=gputorch.float64, device=device, requires_grad=True)
    w = gputorch.randn(5, 5, dtype=gputorch.float64, device=device, requires_grad=True)
    return x, w


def _saved_bytes(fn):
    """Run ``fn`` under an outer saved-tensor hook; return (result, bytes of every tensor it packed)."""
    sizes = []

    def pack(t):
        sizes.append(t.nbytes)
        return t

    with saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return out, sum(sizes)


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_gradients_identical_with_dropout(device, reentrant):
    x, w = _inputs(device)
    gputorch.manual_seed(1)
    expected = segment(x, w)
    expected.sum().backward()
    gx, gw = x.grad, w.grad
    x.grad = w.grad = None

    gputorch.manual_seed(1)
    out = checkpoint(segment, x, w, use_reentrant=reentrant)
    assert_close(out, expected, rtol=0, atol=0)
    out.sum().backward()
    assert_close(x.grad, gx, rtol=0, atol=0)
    assert_close(w.grad, gw, rtol=0, atol=0)


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_random_state_continues_as_without_checkpoint(device, reentrant):
    x, w = _inputs(device)
    gputorch.manual_seed(3)
    segment(x, w).sum().backward()
    after_plain = gputorch.rand(3, device=device)
    gputorch.manual_seed(3)
    checkpoint(segment, x, w, use_reentrant=reentrant).sum().backward()
    assert_close(gputorch.rand(3, device=device), after_plain, rtol=0, atol=0)


@pytest.mark.parametrize("reentrant", VARIANTS)
@pytest.mark.parametrize("fresh_generator", [False, True])
def test_rng_of_a_device_used_only_inside(monkeypatch, reentrant, fresh_generator):
    """Dropout on cuda:1 inside a function whose inputs live elsewhere: that device's state is restored
    too, also when its generator is first created inside the checkpointed function."""
    if gputorch.cuda.device_count() < 2:
        pytest.skip("needs two (real or simulated) CUDA devices")
    from gputorch import random as grandom
    if fresh_generator:
        monkeypatch.setattr(grandom, "_device_generators", {})

    def fn(a):
        return F.dropout(a.to("cuda:1").exp(), 0.5, training=True).to(a.device).sin()

    x = gputorch.randn(40, dtype=gputorch.float64, requires_grad=True)
    state = grandom.default_generator_for(gputorch.device("cuda:1")).get_state()
    fn(x).sum().backward()
    expected = x.grad
    x.grad = None
    grandom.default_generator_for(gputorch.device("cuda:1")).set_state(state)
    if fresh_generator:
        monkeypatch.setattr(grandom, "_device_generators", {})
    checkpoint(fn, x, use_reentrant=reentrant).sum().backward()
    assert_close(x.grad, expected, rtol=0, atol=0)


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_without_preserving_rng_the_dropout_mask_changes(reentrant):
    x, w = _inputs("cpu")
    gputorch.manual_seed(1)
    segment(x, w).sum().backward()
    gx = x.grad
    x.grad = w.grad = None
    gputorch.manual_seed(1)
    checkpoint(segment, x, w, use_reentrant=reentrant, preserve_rng_state=False).sum().backward()
    assert not bool((x.grad == gx).all())


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_only_inputs_are_kept(device, reentrant):
    x, w = _inputs(device)
    input_bytes = x.nbytes + w.nbytes
    plain, plain_bytes = _saved_bytes(lambda: segment(x, w))
    ckpt, ckpt_bytes = _saved_bytes(lambda: checkpoint(segment, x, w, use_reentrant=reentrant))
    assert plain_bytes > 3 * input_bytes      # the segment's activations
    assert ckpt_bytes == input_bytes          # only x and w
    ckpt.sum().backward()
    assert x.grad is not None and w.grad is not None


def test_intermediates_are_freed_after_forward():
    import weakref
    kept = []

    def fn(x):
        h = x.exp()
        kept.append(weakref.ref(h))
        return h.sin()

    x = gputorch.randn(100, dtype=gputorch.float64, requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False)
    assert kept[0]() is None                  # the exp output is neither saved nor alive
    out.sum().backward()
    assert_close(x.grad, (x.exp().cos() * x.exp()).detach())


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_parameters_inside_function_get_gradients(reentrant):
    gputorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    x = gputorch.randn(5, 3, dtype=gputorch.float64, requires_grad=True)
    model(x).pow(2).sum().backward()
    expected = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    checkpoint(model, x, use_reentrant=reentrant).pow(2).sum().backward()
    for p, g in zip(model.parameters(), expected):
        assert_close(p.grad, g, rtol=1e-12, atol=1e-12)


def test_non_reentrant_input_without_grad_still_trains_parameters():
    lin = nn.Linear(3, 2).double()
    x = gputorch.randn(4, 3, dtype=gputorch.float64)
    lin(x).sum().backward()
    expected = lin.weight.grad.clone()
    lin.zero_grad()
    checkpoint(lin, x, use_reentrant=False).sum().backward()
    assert_close(lin.weight.grad, expected)


def test_reentrant_warns_when_no_input_requires_grad():
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        checkpoint(lambda a: a * 2, gputorch.ones(2), use_reentrant=True)


def test_use_reentrant_must_be_explicit():
    x = gputorch.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        out = checkpoint(lambda a: a.sin(), x)
    out.sum().backward()
    assert_close(x.grad, gputorch.ones(2).cos())
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter"):
        checkpoint_sequential([nn.Identity()], 1, x)


def test_keyword_arguments():
    x = gputorch.randn(3, dtype=gputorch.float64, requires_grad=True)
    scale = gputorch.randn(3, dtype=gputorch.float64, requires_grad=True)

    def fn(a, *, scale, power=2):
        return (a * scale).pow(power)

    out = checkpoint(fn, x, scale=scale, power=3, use_reentrant=False)
    out.sum().backward()
    assert_close(x.grad, (3 * (x * scale).pow(2) * scale).detach())
    assert_close(scale.grad, (3 * (x * scale).pow(2) * x).detach())
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(fn, x, scale=scale, use_reentrant=True)


def test_argument_errors():
    x = gputorch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(lambda a: a, x, use_reentrant=False, determinism_check="strict")
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(lambda a: a, x, use_reentrant=True, debug=True)


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_multiple_outputs_and_non_tensor_arguments(reentrant):
    x = gputorch.randn(3, dtype=gputorch.float64, requires_grad=True)

    def fn(a, k, flag):
        return a.sin() * k, (a.exp() if flag else a), "label"

    s, e, label = checkpoint(fn, x, 2.0, True, use_reentrant=reentrant)
    assert label == "label"
    (s.sum() + e.sum()).backward()
    assert_close(x.grad, (2 * x.cos() + x.exp()).detach())


def test_autograd_grad_and_double_backward():
    x = gputorch.randn(4, dtype=gputorch.float64, requires_grad=True)
    fn = lambda a: (a.sin() * a).exp()  # noqa: E731
    (g_plain,) = gputorch.autograd.grad(fn(x).sum(), x, create_graph=True)
    (gg_plain,) = gputorch.autograd.grad(g_plain.sum(), x)
    (g_ckpt,) = gputorch.autograd.grad(checkpoint(fn, x, use_reentrant=False).sum(), x, create_graph=True)
    (gg_ckpt,) = gputorch.autograd.grad(g_ckpt.sum(), x)
    assert_close(g_ckpt, g_plain, rtol=1e-12, atol=1e-12)
    assert_close(gg_ckpt, gg_plain, rtol=1e-12, atol=1e-12)


def test_backward_twice_with_retain_graph():
    x = gputorch.randn(3, dtype=gputorch.float64, requires_grad=True)
    out = checkpoint(lambda a: a.exp().sin(), x, use_reentrant=False).sum()
    out.backward(retain_graph=True)
    first = x.grad.clone()
    out.backward()
    assert_close(x.grad, 2 * first)


def test_early_stop_skips_the_rest_of_the_recomputation():
    calls = []

    def fn(a):
        calls.append("start")
        b = a.sin()
        calls.append("after the last save")
        return b + 1

    x = gputorch.randn(3, requires_grad=True)
    checkpoint(fn, x, use_reentrant=False).sum().backward()
    assert calls == ["start", "after the last save", "start"]
    calls.clear()
    checkpoint(fn, x, use_reentrant=False, early_stop=False).sum().backward()
    assert calls == ["start", "after the last save"] * 2


def test_determinism_check_catches_a_different_recomputation():
    runs = []

    def fn(a):
        runs.append(1)
        return a[:2].exp() if len(runs) == 1 else a.exp()

    x = gputorch.randn(3, requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata"):
        out.sum().backward()


def test_inplace_change_of_input_is_detected():
    x = gputorch.randn(3, requires_grad=True)
    y = x * 1
    out = checkpoint(lambda a: a.exp(), y, use_reentrant=False)
    with gputorch.no_grad():
        y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_no_grad_mode_just_runs():
    x = gputorch.randn(3, requires_grad=True)
    with gputorch.no_grad():
        out = checkpoint(lambda a: a.exp(), x, use_reentrant=False)
    assert not out.requires_grad
    assert_close(out, x.detach().exp())


def test_nested_checkpoints():
    x = gputorch.randn(4, dtype=gputorch.float64, requires_grad=True)

    def inner(a):
        return a.exp().sin()

    def outer(a):
        return checkpoint(inner, a.cos(), use_reentrant=False).tanh()

    checkpoint(outer, x, use_reentrant=False).sum().backward()
    got = x.grad
    x.grad = None
    outer(x).sum().backward()
    assert_close(got, x.grad, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reentrant", VARIANTS)
@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential(device, reentrant, segments):
    gputorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 8), nn.Tanh(),
                          nn.Linear(8, 2)).double().to(device)
    x = gputorch.randn(6, 4, dtype=gputorch.float64, device=device, requires_grad=True)
    gputorch.manual_seed(5)
    model(x).sum().backward()
    expected = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    gputorch.manual_seed(5)
    checkpoint_sequential(model, segments, x, use_reentrant=reentrant).sum().backward()
    for got, want in zip([p.grad for p in model.parameters()] + [x.grad], expected):
        assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_checkpoint_sequential_keeps_less_and_accepts_lists():
    fns = [lambda a: a.exp(), lambda a: a.sin(), lambda a: a.exp(), lambda a: a.sin()]
    x = gputorch.randn(50, dtype=gputorch.float64, requires_grad=True)
    _, plain = _saved_bytes(lambda: fns[3](fns[2](fns[1](fns[0](x)))))
    out, ckpt = _saved_bytes(lambda: checkpoint_sequential(fns, 2, x, use_reentrant=False))
    assert ckpt < plain
    out.sum().backward()
    assert x.grad is not None
    with pytest.raises(ValueError, match="Unexpected keyword arguments: bogus"):
        checkpoint_sequential(fns, 2, x, use_reentrant=False, bogus=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint_sequential(fns, 2, x, use_reentrant=False, preserve_rng_state=False)


def test_recomputation_saving_fewer_tensors_is_an_error():
    runs = []

    def fn(a):
        runs.append(1)
        return a.exp().sin() if len(runs) == 1 else a.exp()

    x = gputorch.randn(3, requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False, determinism_check="none")
    with pytest.raises(CheckpointError, match="A different number of tensors was saved"):
        out.sum().backward()
