"""Distributed data-parallel training on this machine: all-reduce bandwidth through gputorch.distributed
against raw mpi4py on the same buffers, DDP steps on 2 processes against 1, the overlap of gradient
communication with backward, and a fitted cost model projected to 8 machines of 8 GPUs.

Processes are started with MPICH's ``mpiexec`` (the ``distributed`` extra); one BLAS thread per
process, as the launcher gives them. Run alone: ``python bench/distributed.py [--quick]``, or through
``python bench/run_all.py``. The projection is a model (see ``ddp_cost_model.py``), not a measurement.
"""
import json
import os
import shutil
import subprocess
import sys

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [BENCH_DIR]

from ddp_cost_model import fit_allreduce, predict_step  # noqa: E402

TITLE = "Distributed data parallel (MPI, 2 processes on this machine)"

# Stated interconnects for the projection (bus bandwidth of a ring all-reduce, per-call latency).
INTERCONNECTS = {
    "NVLink in a node, InfiniBand 400 Gb/s per GPU between nodes": {"intra": (300e9, 10e-6), "inter": (50e9, 25e-6)},
    "NVLink in a node, Ethernet 100 Gb/s per node between nodes": {"intra": (300e9, 10e-6), "inter": (12.5e9 / 8, 50e-6)},
}
# GPT-2 small on one H100 (stated assumption): 124M parameters, float32 gradients in 25 MB buckets,
# 8 sequences of 1024 tokens per GPU; 6 * params * tokens FLOPs at 400 TFLOP/s effective.
GPT2_PARAMS = 124_000_000
GPT2_COMPUTE_S = 6 * GPT2_PARAMS * 8 * 1024 / 400e12


def _mpiexec():
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return here if os.path.exists(here) else shutil.which("mpiexec")


def _run(n, extra, quick):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [_mpiexec(), "-n", str(n), sys.executable, os.path.join(BENCH_DIR, "_distributed_worker.py"), *extra]
    if quick:
        cmd.append("--quick")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"the distributed benchmark failed:\n{out.stdout}\n{out.stderr}")
    line = next(li for li in out.stdout.splitlines() if li.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def _buckets(total_bytes, cap=25 << 20, first=1 << 20):
    sizes, left = [], total_bytes
    for c in [first] + [cap] * (total_bytes // cap + 1):
        if left <= 0:
            break
        sizes.append(min(c, left))
        left -= c
    return sizes


def _world_link(world, links):
    bandwidth, alpha = links["intra"] if world <= 8 else links["inter"]
    return alpha, bandwidth


def run(device="cpu", quick=False):
    if _mpiexec() is None:
        return {"skipped": "mpiexec not found: install the 'distributed' extra"}
    one = _run(1, [], quick)
    two = _run(2, ["--allreduce"], quick)
    _, bandwidth = fit_allreduce([r for r in two["allreduce"] if r["bytes"] >= 64 << 10], 2)
    alpha = two["allreduce"][0]["gputorch_s"]          # the smallest message: the latency per call
    models = []
    for single, pair in zip(one["ddp"], two["ddp"]):
        compute_half = pair["fwd_bwd_local_s"] + (single["step_s"] - single["fwd_bwd_local_s"])
        predicted = predict_step(compute_half, 2 / 3 * pair["fwd_bwd_local_s"], pair["bucket_bytes"], 2, alpha,
                                 bandwidth, pair["overlap"])
        models.append({"model": single["model"], "params": single["params"], "step_1_s": single["step_s"],
                       "step_2_s": pair["step_s"], "speedup": single["step_s"] / pair["step_s"],
                       "overlap": pair["overlap"], "comm_alone_s": pair["comm_alone_s"],
                       "predicted_step_2_s": predicted, "bucket_bytes": pair["bucket_bytes"],
                       "compute_1_s": single["step_s"], "backward_1_s": 2 / 3 * single["fwd_bwd_local_s"]})
    projection = []
    overlap = max(m["overlap"] for m in models)
    cases = [(models[0]["model"] + ", this CPU's compute per process", models[0]["compute_1_s"],
              models[0]["backward_1_s"], models[0]["bucket_bytes"]),
             ("GPT-2 small (124M), assumed H100 compute", GPT2_COMPUTE_S, GPT2_COMPUTE_S * 2 / 3,
              _buckets(GPT2_PARAMS * 4))]
    for label, compute, backward, buckets in cases:
        for link_name, links in INTERCONNECTS.items():
            row = {"case": label, "interconnect": link_name, "steps": {}}
            for world in (1, 2, 8, 16, 32, 64):
                a, bw = _world_link(world, links)
                t = predict_step(compute, backward, buckets, world, a, bw, overlap)
                row["steps"][world] = {"step_s": t, "efficiency": compute / t}
            projection.append(row)
    return {"allreduce": two["allreduce"], "fit": {"alpha_s": alpha, "bandwidth_Bps": bandwidth},
            "models": models, "projection": projection, "overlap_used": overlap}


def format_table(result):
    if "skipped" in result:
        return f"skipped: {result['skipped']}"
    lines = ["All-reduce (float32, 2 processes): gputorch.distributed.all_reduce against mpi4py's Allreduce",
             "| size | mpi4py | gputorch | overhead | bus bandwidth |", "|---:|---:|---:|---:|---:|"]
    for r in result["allreduce"]:
        lines.append(f"| {r['bytes'] / 1024:.0f} KiB | {r['mpi4py_s'] * 1e6:.0f} us | {r['gputorch_s'] * 1e6:.0f} us | "
                     f"{(r['gputorch_s'] / r['mpi4py_s'] - 1) * 100:+.1f}% | {r['bus_GBps']:.2f} GB/s |")
    fit = result["fit"]
    lines += ["", f"Fit: latency {fit['alpha_s'] * 1e6:.1f} us, bus bandwidth {fit['bandwidth_Bps'] / 1e9:.2f} GB/s",
              "", "DDP step (global batch split over the processes):",
              "| model | params | 1 process | 2 processes | speedup | comm alone | overlap | model's 2-process step |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for m in result["models"]:
        lines.append(f"| {m['model']} | {m['params']:,} | {m['step_1_s'] * 1e3:.2f} ms | {m['step_2_s'] * 1e3:.2f} ms | "
                     f"{m['speedup']:.2f}x | {m['comm_alone_s'] * 1e3:.2f} ms | {m['overlap']:.0%} | "
                     f"{m['predicted_step_2_s'] * 1e3:.2f} ms |")
    worlds = sorted(next(iter(result["projection"]))["steps"], key=int)
    lines += ["", f"Projection (a MODEL, not a measurement; weak scaling, overlap {result['overlap_used']:.0%}): "
              "step time and scaling efficiency", "| case | interconnect | " +
              " | ".join(f"N={w}" for w in worlds) + " |", "|---|---|" + "---:|" * len(worlds)]
    for row in result["projection"]:
        cells = [f"{row['steps'][w]['step_s'] * 1e3:.1f} ms ({row['steps'][w]['efficiency']:.0%})" for w in worlds]
        lines.append(f"| {row['case']} | {row['interconnect']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    print(format_table(run("cpu", quick)))
