"""Bessel functions of the first and second kind and Airy's Ai: tabulated values, recurrences that
tie them together, dtypes, no gradient, and agreement with torch.special."""
import numpy as np
import pytest

import gputorch as T
from tests._helpers import assert_close


def test_tabulated_values(device):
    x = T.tensor([0.0, 1.0, 2.404825557695773], dtype=T.float64, device=device)
    assert_close(T.special.bessel_j0(x), [1.0, 0.7651976865579666, 0.0], atol=1e-15)
    assert_close(T.special.bessel_j1(x[:2]), [0.0, 0.44005058574493355], atol=1e-15)
    assert_close(T.special.bessel_y0(x[1:2]), [0.08825696421567697], rtol=1e-14)
    assert_close(T.special.bessel_y1(x[1:2]), [-0.7812128213002887], rtol=1e-14)
    assert_close(T.special.airy_ai(x[:2]), [0.3550280538878172, 0.1352924163128814], rtol=1e-14)


def test_wronskian_and_dtypes(device):
    x = T.linspace(0.5, 30, 50, dtype=T.float64, device=device)
    j0, j1 = T.special.bessel_j0(x), T.special.bessel_j1(x)
    y0, y1 = T.special.bessel_y0(x), T.special.bessel_y1(x)
    assert_close(j1 * y0 - j0 * y1, (2 / (np.pi * x)).cpu(), rtol=1e-12, atol=1e-14)   # J1 Y0 - J0 Y1 = 2/(pi x)
    assert T.special.bessel_j0(T.tensor([1, 2], device=device)).dtype is T.float32
    assert T.special.airy_ai(T.ones(2, dtype=T.float16, device=device)).dtype is T.float16
    assert not T.special.bessel_y1(T.ones(2, device=device, requires_grad=True)).requires_grad


def test_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.array([-3.0, -0.5, 0.0, 0.7, 2.0, 10.0, 30.0, np.inf, np.nan])
    for name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"):
        ours = getattr(T.special, name)(T.tensor(x)).numpy()
        theirs = getattr(torch.special, name)(torch.tensor(x)).numpy()
        # torch's own approximations are up to 1e-8 off near x = 10 (SciPy's J0(10) and J1(10) are
        # correct to the last digit), so this compares at 1e-7
        np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-12, equal_nan=True, err_msg=name)
