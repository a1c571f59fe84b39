"""gcd, lcm, copysign, heaviside, nextafter, ldexp and frexp: values, dtypes, gradients and errors
against PyTorch (the differential suite covers random inputs)."""
import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close


def _both(device):
    """torch, and ``make(lib, data, **kw)``: a tensor of either library (gputorch's on ``device``)."""
    torch = pytest.importorskip("torch")

    def make(lib, data, **kw):
        return lib.tensor(data, device=device, **kw) if lib is gputorch else lib.tensor(data, **kw)
    return torch, make


def test_integer_and_step_functions(device):
    torch, make = _both(device)
    for lib in (gputorch, torch):
        i, j = make(lib, [12, -18, 0]), make(lib, [8, 12, 5], dtype=lib.int32)
        f = make(lib, [1.5, -2.0, 0.0, float("nan")])
        got = (lib.gcd(i, j), lib.lcm(i, j), lib.heaviside(f, make(lib, [0.5])),
               lib.heaviside(i, make(lib, [7])), lib.nextafter(f[:3].double(), make(lib, [1.0], dtype=lib.float64)))
        if lib is gputorch:
            ours = got
    for a, e in zip(ours, got):
        assert_close(a, e, 0, 0)
    with pytest.raises(NotImplementedError, match="gcd_cpu"):
        gputorch.gcd(make(gputorch, [1.5]), make(gputorch, [2.5]))
    with pytest.raises(RuntimeError, match="different dtypes"):
        gputorch.heaviside(make(gputorch, [1.0]), make(gputorch, [1.0], dtype=gputorch.float64))
    with pytest.raises(TypeError, match="must be Tensor"):
        gputorch.gcd(make(gputorch, [4]), 2)


def test_copysign_ldexp_frexp_values_and_gradients(device):
    torch, make = _both(device)
    results = {}
    for lib in (gputorch, torch):
        x = make(lib, [1.5, -2.0, 0.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = make(lib, [-1.0, 1.0, -0.0, 2.0], dtype=lib.float64, requires_grad=True)
        e = make(lib, [2, 1, 3, 0])   # (torch computes the gradient of negative integer exponents as 0)
        c = lib.copysign(x, y)
        l = lib.ldexp(x, e)
        m, ex = lib.frexp(x)
        (c * make(lib, [1.0, 2.0, 3.0, 4.0], dtype=lib.float64) + l + m * 3).sum().backward()
        results[lib] = (c, l, m, ex, x.grad, y.grad)
    for a, b in zip(results[gputorch], results[torch]):
        assert_close(a, b, 1e-12, 1e-12)
    assert results[gputorch][3].dtype == gputorch.int32
    with pytest.raises(RuntimeError, match="only supports floating-point"):
        gputorch.frexp(make(gputorch, [1, 2]))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
def test_gcd_lcm_wrap_like_torch(device, dtype):
    """PyTorch computes gcd and lcm as C does: the width's minimum keeps its sign through abs, and
    lcm's product wraps (int8: gcd(-128, 5) == -1, lcm(127, 4) == -4)."""
    torch, make = _both(device)
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    a = rng.integers(max(info.min, -300), min(info.max, 300), 300).astype(dtype)
    b = rng.integers(max(info.min, -300), min(info.max, 300), 300).astype(dtype)
    # the minimum of int32/int64 divided by a gcd of -1 traps in torch's C++ (SIGFPE): not compared
    a[:3] = [info.min if info.bits <= 16 else -7, 0, info.max]
    b[:3] = [5, 0, 4]
    for name in ("gcd", "lcm"):
        ours = getattr(gputorch, name)(make(gputorch, a), make(gputorch, b))
        theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
        assert_close(ours, theirs, 0, 0)
