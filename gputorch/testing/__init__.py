"""``gputorch.testing``: ``assert_close`` and ``make_tensor`` as in ``torch.testing``, and the
deprecated ``assert_allclose``."""
import warnings

from ._comparison import assert_close
from ._creation import make_tensor

__all__ = ["assert_close", "make_tensor", "assert_allclose"]

# the tolerances the deprecated assert_allclose uses (looser than assert_close's)
_ALLCLOSE_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated (as in PyTorch): ``assert_close`` with ``expected`` taken as a tensor like
    ``actual``, dtypes not checked, NaN equal by default, and looser default tolerances
    (float16 1e-3/1e-3, float32 1e-4/1e-5, float64 1e-5/1e-8)."""
    import gputorch
    warnings.warn("`gputorch.testing.assert_allclose()` is deprecated (as in PyTorch since 1.12). "
                  "Please use `gputorch.testing.assert_close()` instead.", FutureWarning, stacklevel=2)
    if not isinstance(actual, gputorch.Tensor):
        actual = gputorch.tensor(actual)
    if not isinstance(expected, gputorch.Tensor):
        expected = gputorch.tensor(expected, dtype=actual.dtype, device=actual.device)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(str(t.dtype).split(".")[-1], (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
