"""Half-precision matrix products accumulate in float32 (gputorch/ops/_gemm.py): the result is the
float32 product rounded once, as PyTorch's, on every backend."""
import numpy as np
import pytest

import gputorch
import gputorch.nn.functional as F
from tests._helpers import to_numpy


def test_float16_products_accumulate_in_float32(device):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 512)).astype(np.float16)
    b = rng.standard_normal((512, 8)).astype(np.float16)
    expected = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    ga, gb = gputorch.tensor(a, device=device), gputorch.tensor(b, device=device)
    zeros = gputorch.zeros(16, 8, dtype=gputorch.float16, device=device)
    for got in (ga @ gb, gputorch.mm(ga, gb), F.linear(ga, gb.t()), gputorch.addmm(zeros, ga, gb),
                gputorch.bmm(ga[None], gb[None])[0]):
        assert got.dtype is gputorch.float16
        np.testing.assert_array_equal(to_numpy(got), expected)


def test_float16_products_match_torch(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 9, 9)).astype(np.float16)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float16)
    ours = to_numpy(F.conv2d(gputorch.tensor(x, device=device), gputorch.tensor(w, device=device), padding=1))
    theirs = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
    np.testing.assert_allclose(ours.astype(np.float32), theirs.astype(np.float32), rtol=2e-3, atol=2e-3)
