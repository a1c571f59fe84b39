"""CUDA graphs: launches per training step, eager vs one graph replay (and time on a GPU).

    python bench/cuda_graphs.py                 # simulated device: launch counts only
    python bench/cuda_graphs.py --device cuda   # a GPU: launch counts are not observable there,
                                                # eager and replay steps are timed instead

The step is a small MLP's (784-256-256-10, batch 32, ReLU, MSE loss, SGD with momentum):
forward, backward and optimizer step. On the simulated device (``GPUTORCH_SIMULATE_CUDA``, set
here in a child process when the parent has no CUDA) every kernel, copy and graph launch is
counted: eager launches each kernel from Python, a replay launches one graph. On a GPU the
median step time of each is measured (no torch column: the comparison is gputorch against
itself).
"""
import argparse
import json
import os
import subprocess
import sys
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)
if REPO not in sys.path:
    sys.path.insert(0, REPO)

TITLE = "CUDA graphs: launches and time per MLP training step, eager vs graph replay"


def _setup(torch, sizes=(784, 256, 256, 10), batch=32):
    torch.manual_seed(0)
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1]).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, sizes[0], device="cuda")
    t = torch.randn(batch, sizes[-1], device="cuda")
    return model, opt, x, t


def _step(torch, model, opt, x, t):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), t)
    loss.backward()
    opt.step()


def _captured(torch, model, opt, x, t):
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        for _ in range(2):
            _step(torch, model, opt, x, t)
    opt.zero_grad(set_to_none=True)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        torch.nn.functional.mse_loss(model(x), t).backward()
        opt.step()
    return g


def count_launches():
    """``{"eager": counters, "replay": counters, "nodes": n}`` on the simulated device."""
    import gputorch as torch
    from gputorch.backends import simulated_cupy_graph as sim
    model, opt, x, t = _setup(torch)
    _step(torch, model, opt, x, t)
    sim.reset_counters()
    _step(torch, model, opt, x, t)
    eager = dict(sim.counters)
    g = _captured(torch, model, opt, x, t)
    sim.reset_counters()
    g.replay()
    return {"eager": eager, "replay": dict(sim.counters), "nodes": g._graph.num_nodes}


def time_steps(number=50):
    """Median milliseconds of an eager step and of a replay, on a GPU."""
    import gputorch as torch
    model, opt, x, t = _setup(torch)
    eager = []
    for _ in range(5):
        _step(torch, model, opt, x, t)
    torch.cuda.synchronize()
    for _ in range(number):
        start = time.perf_counter()
        _step(torch, model, opt, x, t)
        torch.cuda.synchronize()
        eager.append(time.perf_counter() - start)
    g = _captured(torch, model, opt, x, t)
    replay = []
    for _ in range(number):
        start = time.perf_counter()
        g.replay()
        torch.cuda.synchronize()
        replay.append(time.perf_counter() - start)
    eager.sort()
    replay.sort()
    return {"eager_ms": eager[number // 2] * 1e3, "replay_ms": replay[number // 2] * 1e3}


def _simulated_counts():
    if os.environ.get("GPUTORCH_SIMULATE_CUDA"):
        return count_launches()
    env = dict(os.environ, GPUTORCH_SIMULATE_CUDA="1", PYTHONPATH=os.pathsep.join(
        [REPO] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--json"], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run(device="cpu", quick=False):
    rows = []
    if device.startswith("cuda") and not os.environ.get("GPUTORCH_SIMULATE_CUDA"):
        times = time_steps(10 if quick else 50)
        rows.append({"case": "MLP step (GPU time)", "eager": f"{times['eager_ms']:.3f} ms",
                     "replay": f"{times['replay_ms']:.3f} ms",
                     "ratio": f"{times['eager_ms'] / times['replay_ms']:.2f}x"})
        return rows
    c = _simulated_counts()
    e, r = c["eager"], c["replay"]
    rows.append({"case": "MLP step (simulated launches)",
                 "eager": f"{e['kernels']} kernels + {e['memcpy']} copies",
                 "replay": f"{r['graph_launches']} graph launch ({c['nodes']} nodes)",
                 "ratio": f"{(e['kernels'] + e['memcpy']) / max(1, r['graph_launches'] + r['kernels']):.0f}x fewer"})
    return rows


def format_table(rows):
    lines = ["| case | eager | replay | eager/replay |", "| --- | --- | --- | --- |"]
    for row in rows:
        lines.append(f"| {row['case']} | {row['eager']} | {row['replay']} | {row['ratio']} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=TITLE)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true", help="(internal) print the simulated counts as JSON")
    args = parser.parse_args(argv)
    if args.json:
        print(json.dumps(count_launches()))
        return
    print(format_table(run(args.device, args.quick)))


if __name__ == "__main__":
    main()
