"""The memory profiler under DistributedDataParallel: the gradient buckets are "communication"
memory (exactly their bytes), and every bucket all-reduce is a mark on the timeline."""
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import passed, setup  # noqa: E402

import gputorch as torch  # noqa: E402
from gputorch import nn  # noqa: E402
from gputorch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from gputorch.profiler import MemoryProfiler  # noqa: E402

rank, n, dev = setup(sys.argv[1] if len(sys.argv) > 1 else "mpi")
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10)).to(dev)
params_bytes = sum(p.numel() * 4 for p in net.parameters())
with MemoryProfiler(net, device=dev) as prof:      # buckets made while profiling
    model = DDP(net, bucket_cap_mb=0.05)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        opt.zero_grad()
        x = torch.randn(16, 64, device=dev)
        model(x).square().mean().backward()
        opt.step()
report = prof.report()
buckets = model.bucket_sizes()
assert len(buckets) >= 2, buckets
assert sum(buckets) == params_bytes
assert report.current["communication"] == sum(buckets), (report.current, buckets)
assert report.peak["communication"] == sum(buckets), report.peak
assert report.current["parameters"] == params_bytes
reduces = [m for m in report.communication if m["name"] == "all_reduce"]
assert len(reduces) == 3 * len(buckets), len(reduces)
assert all(m["phase"] == "backward" and m["end"] is not None and m["end"] >= m["start"] for m in reduces)
assert sorted(m["bytes"] for m in reduces[:len(buckets)]) == sorted(buckets)
assert "Communication (collectives while profiling)" in str(report)
with tempfile.TemporaryDirectory() as tmp:                # the HTML report draws and lists the marks
    report.save_html(os.path.join(tmp, "r.html"))
    page = open(os.path.join(tmp, "r.html")).read()
assert "<h2>Communication</h2>" in page and '"comm": [[' in page
assert report.to_dict()["communication"][0]["name"].split(" ")[0] in ("broadcast", "all_reduce")

with MemoryProfiler(net, device=dev) as prof2:       # buckets that existed before profiling began
    model(torch.randn(4, 64, device=dev)).sum().backward()
assert prof2.report().current["communication"] == sum(buckets)
np.testing.assert_equal(rank < n, True)
passed(rank)
