"""Mixed precision in the memory profiler: the report gives the activations by dtype, and
``estimate_memory(..., autocast=dtype)`` predicts, on the meta device, the activation high point of
a float32 step and of an autocast step, equal to what the profiler measures when they run."""
import pytest

import gputorch
from gputorch import nn
from gputorch.profiler import MemoryProfiler, estimate_memory


def _model(device):
    gputorch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.GELU(), nn.Linear(128, 10)).to(device)


def _measured(model, x, device, enabled):
    with MemoryProfiler(model) as prof:
        with gputorch.autocast(device.split(":")[0], dtype=gputorch.float16, enabled=enabled):
            loss = nn.functional.cross_entropy(model(x), gputorch.zeros(x.shape[0], dtype=gputorch.int64,
                                                                          device=device))
        loss.backward()
    return prof.report()


def test_activations_by_dtype_and_the_predicted_saving(device):
    model = _model(device)
    x = gputorch.randn(256, 64, device=device)
    plain, mixed = _measured(model, x, device, False), _measured(model, x, device, True)
    assert set(plain.activations_by_dtype) == {"float32"}
    assert "float16" in mixed.activations_by_dtype
    assert sum(mixed.activations_by_dtype.values()) == mixed.category_peaks["activations"]
    assert "Activations at their highest, by dtype: float16" in str(mixed)
    saving = plain.category_peaks["activations"] - mixed.category_peaks["activations"]
    assert saving > 0

    def loss_fn(out):
        return nn.functional.cross_entropy(out, gputorch.zeros(out.shape[0], dtype=gputorch.int64,
                                                               device=out.device))
    est = estimate_memory(model, x, loss_fn=loss_fn, autocast=gputorch.float16)
    assert est.activations_without_autocast == plain.category_peaks["activations"]
    assert est.activations_with_autocast == mixed.category_peaks["activations"]
    assert est.autocast_saving == saving
    assert est.activations_by_dtype == mixed.activations_by_dtype
    assert "What-if: autocast to gputorch.float16" in str(est)
    assert est.to_dict()["estimate"]["autocast_saving"] == saving


def test_without_autocast_the_estimate_has_no_autocast_figures():
    est = estimate_memory(_model("cpu"), gputorch.randn(8, 64))
    assert est.autocast is None and est.autocast_saving == 0 and est.activations_with_autocast is None
    with pytest.raises(TypeError):
        estimate_memory(_model("cpu"), gputorch.randn(8, 64), autocast="half-ish")
