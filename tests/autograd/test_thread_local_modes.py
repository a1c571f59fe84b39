"""Grad mode, inference mode and saved-tensor hooks are per thread, as in PyTorch."""
import threading

import numpy as np

import gputorch
from gputorch import nn
import gputorch.nn.functional as F


def _in_thread(fn):
    result, errors = [], []

    def run():
        try:
            result.append(fn())
        except BaseException as exc:  # re-raised in the main thread
            errors.append(exc)
    t = threading.Thread(target=run)
    t.start()
    t.join()
    if errors:
        raise errors[0]
    return result[0]


def test_no_grad_in_one_thread_leaves_others_recording():
    entered, release = threading.Event(), threading.Event()

    def hold_no_grad():
        with gputorch.no_grad():
            entered.set()
            release.wait(10)
    holder = threading.Thread(target=hold_no_grad)
    holder.start()
    try:
        assert entered.wait(10)
        a = gputorch.ones(2, requires_grad=True)
        assert gputorch.is_grad_enabled()
        assert (a * 2).requires_grad
        assert _in_thread(lambda: (gputorch.ones(2, requires_grad=True) * 2).requires_grad)
    finally:
        release.set()
        holder.join()


def test_new_thread_starts_with_default_modes():
    with gputorch.no_grad(), gputorch.inference_mode():
        assert not gputorch.is_grad_enabled()
        flags = _in_thread(lambda: (gputorch.is_grad_enabled(), gputorch.is_inference_mode_enabled()))
    assert flags == (True, False)


def test_saved_tensor_hooks_do_not_leak_into_other_threads():
    packed = []

    def pack(t):
        packed.append(threading.get_ident())
        return t

    with gputorch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        def other():
            x = gputorch.ones(3, requires_grad=True)
            (x * x).sum().backward()
            return x.grad
        grad = _in_thread(other)
    assert packed == []
    np.testing.assert_allclose(grad.numpy(), 2.0)


def test_two_threads_train_at_once_like_one_after_the_other():
    def train(seed, steps=20):
        gen = np.random.default_rng(seed)
        x = gputorch.tensor(gen.standard_normal((32, 4)), dtype=gputorch.float64)
        y = gputorch.tensor(gen.standard_normal((32, 1)), dtype=gputorch.float64)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).double()
        with gputorch.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(gputorch.tensor(np.random.default_rng(i).standard_normal(tuple(p.shape)) * 0.3))
        opt = gputorch.optim.SGD(model.parameters(), lr=0.05)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            with gputorch.no_grad():  # evaluation between steps switches grad mode off and on
                losses.append(float(F.mse_loss(model(x), y)))
        return losses

    expected = [train(0), train(1)]
    results = [None, None]
    barrier = threading.Barrier(2)

    def worker(i):
        barrier.wait()
        results[i] = train(i)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == expected
    assert expected[0][-1] < expected[0][0]
