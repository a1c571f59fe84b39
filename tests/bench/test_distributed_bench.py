"""bench/ddp_cost_model.py: the ring all-reduce model and its fit recover known parameters; and a quick
run of bench/distributed.py reports every figure (no timing is asserted)."""
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
pytestmark = pytest.mark.skipif(not BENCH.is_dir(), reason="bench/ is not beside the tests")


@pytest.fixture
def bench_modules(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import ddp_cost_model
    import distributed
    yield ddp_cost_model, distributed
    sys.modules.pop("ddp_cost_model", None)
    sys.modules.pop("distributed", None)


def test_fit_recovers_latency_and_bandwidth(bench_modules):
    model, _ = bench_modules
    alpha, bandwidth = 20e-6, 5e9
    rows = [{"bytes": b, "gputorch_s": model.ring_time(b, 4, alpha, bandwidth)} for b in (1 << 16, 1 << 20, 1 << 24)]
    got_alpha, got_bandwidth = model.fit_allreduce(rows, 4)
    assert got_alpha == pytest.approx(alpha, rel=1e-6) and got_bandwidth == pytest.approx(bandwidth, rel=1e-9)
    assert model.ring_time(1 << 20, 1, alpha, bandwidth) == 0.0
    assert model.ring_time(1000, 2, 0.0, 1e3) == pytest.approx(1.0)          # 2 (N-1)/N = 1 at N = 2


def test_predicted_step_hides_communication_behind_backward(bench_modules):
    model, _ = bench_modules
    buckets = [1000, 1000]                                                       # 1 s each at N = 2, bw 1e3
    assert model.predict_step(5.0, 3.0, buckets, 1, 0.0, 1e3, 1.0) == 5.0
    assert model.predict_step(5.0, 3.0, buckets, 2, 0.0, 1e3, 0.0) == pytest.approx(7.0)
    assert model.predict_step(5.0, 3.0, buckets, 2, 0.0, 1e3, 1.0) == pytest.approx(6.0)   # the last bucket stays


def test_quick_run_reports_every_figure(bench_modules):
    pytest.importorskip("mpi4py")
    _, bench = bench_modules
    if bench._mpiexec() is None:
        pytest.skip("mpiexec is not installed")
    result = bench.run("cpu", quick=True)
    assert [r["bytes"] for r in result["allreduce"]][:3] == [4 << 10, 64 << 10, 1 << 20]
    assert all(r["gputorch_s"] > 0 and r["mpi4py_s"] > 0 for r in result["allreduce"])
    assert len(result["models"]) == 2 and all(m["step_2_s"] > 0 for m in result["models"])
    text = bench.format_table(result)
    assert "a MODEL, not a measurement" in text and "N=64" in text
