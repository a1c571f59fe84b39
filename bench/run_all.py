"""Run every benchmark, print one Markdown table, and write bench/results/latest.{md,json}.

    python bench/run_all.py                 # CPU, full timing (about a minute)
    python bench/run_all.py --device cuda   # on a GPU machine
    python bench/run_all.py --quick         # smoke run: short samples, figures not meaningful
    python bench/run_all.py --threads 0     # NumPy/torch thread pools at their defaults (default: 1)

The gputorch measured is this checkout's (the repository root goes first on sys.path).
A new benchmark is a module beside this one with ``TITLE``, ``run(device, quick) -> rows``
and ``format_table(rows)``, listed in ``BENCHMARKS``.
"""
import argparse
import datetime
import importlib
import json
import os
import platform
import sys

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)
sys.path[:0] = [REPO, BENCH_DIR]

BENCHMARKS = ["autograd_overhead", "training_step", "cnn_step", "gpt_step", "dataloader", "kernels", "memory_profiler",
              "distributed", "cuda_graphs"]

from timing import THREAD_VARIABLES, add_clock_option, limit_threads, use_clock  # noqa: E402


def environment(device):
    """What the figures depend on: versions, threads, machine, and the OpenBLAS settings."""
    import numpy
    import gputorch
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": device,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "numpy": numpy.__version__,
        "gputorch": gputorch.__version__,
        "gputorch_path": os.path.dirname(gputorch.__file__),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "threads": {var: os.environ.get(var) for var in THREAD_VARIABLES},
        "simulated_cuda": os.environ.get("GPUTORCH_SIMULATE_CUDA"),
    }
    try:
        import torch
        env["torch"] = torch.__version__
        env["torch_threads"] = torch.get_num_threads()
    except ImportError:
        env["torch"] = None
    return env


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run every gputorch benchmark against PyTorch.")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:N")
    parser.add_argument("--quick", action="store_true", help="short samples: a smoke run, not figures")
    parser.add_argument("--out", default=os.path.join(BENCH_DIR, "results"),
                        help="folder for latest.md and latest.json (default: bench/results)")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for NumPy's BLAS and torch (default 1; 0 = library defaults)")
    add_clock_option(parser)
    args = parser.parse_args(argv)
    limit_threads(args.threads)
    use_clock(args.clock)

    env = environment(args.device)
    sections, results = [], {}
    for name in BENCHMARKS:
        module = importlib.import_module(name)
        rows = module.run(device=args.device, quick=args.quick)
        results[name] = {"title": module.TITLE, "rows": rows}
        sections.append(f"## {module.TITLE}\n\n{module.format_table(rows)}\n")

    header = (f"# gputorch benchmarks\n\n{env['date']}, device {args.device}"
              f"{' (simulated)' if env['simulated_cuda'] and args.device.startswith('cuda') else ''}, "
              f"Python {env['python']}, NumPy {env['numpy']}, torch {env['torch'] or 'not installed'}"
              f"{' (threads: %d)' % env['torch_threads'] if env.get('torch_threads') else ''}, "
              f"OPENBLAS_NUM_THREADS={env['threads']['OPENBLAS_NUM_THREADS']}, "
              f"{env['cpu_count']} CPUs ({env['processor']}), OPENBLAS_CORETYPE={env['OPENBLAS_CORETYPE']}"
              f"{', clock: CPU time of the process' if args.clock == 'cpu' else ''}"
              f"{', QUICK RUN: figures not meaningful' if args.quick else ''}\n")
    markdown = "\n".join([header] + sections)
    print(markdown)

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "latest.md"), "w") as f:
        f.write(markdown)
    with open(os.path.join(args.out, "latest.json"), "w") as f:
        json.dump({"environment": env, "quick": args.quick, "clock": args.clock, "benchmarks": results}, f, indent=2)
    print(f"wrote {os.path.join(args.out, 'latest.md')} and latest.json")


if __name__ == "__main__":
    main()
