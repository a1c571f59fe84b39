"""Device and dtype conversions (``gputorch/ops/conversion.py``) not covered by the cross-device
tests: ``Tensor.mtia``, which fails as in a PyTorch build without MTIA."""
import pytest

import gputorch


def test_mtia_fails_as_in_a_build_without_mtia():
    x = gputorch.ones(2)
    for device in (None, "mtia", "mtia:0"):
        with pytest.raises(AssertionError, match="MTIA"):
            x.mtia(device)
    with pytest.raises(RuntimeError, match="must be MTIA device"):
        x.mtia("cpu")
    with pytest.raises(RuntimeError, match="accelerator"):
        x.mtia(0)
