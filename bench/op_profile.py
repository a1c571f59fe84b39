"""Where a training step's time goes, op by op: gputorch's graph nodes (forward and backward), and
torch's operators for the same step.

    python bench/op_profile.py gpt-small            # one of: gpt-small gpt-larger lstm gru cnn mlp
    python bench/op_profile.py lstm --steps 5 --top 12

gputorch: the step runs under ``cProfile`` with CPU time as its clock; every op is a graph-node
class whose ``forward`` (through dispatch) and ``backward`` (through the engine) are functions, so
their cumulative times are the op's cost, nested ops included (a composite op counts its parts
too). torch: ``torch.profiler``'s self CPU time per operator. Profiling slows the Python side of
both (more so gputorch's), so compare shares, and take step times from ``gpt_step.py``/
``cnn_step.py``. One BLAS/OpenMP thread each, as in ``run_all.py``.
"""
import argparse
import cProfile
import collections
import os
import sys
import time

if __package__ in (None, ""):
    sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.path.dirname(__file__)]

from timing import limit_threads  # noqa: E402

STEPS = {
    "gpt-small": ("gpt_step", "gpt_step", dict(width=64, layers=2, heads=4, context=64, batch=8)),
    "gpt-larger": ("gpt_step", "gpt_step", dict(width=256, layers=4, heads=8, context=128, batch=16)),
    "lstm": ("gpt_step", "lstm_lm_step", {}),
    "gru": ("gpt_step", "lstm_lm_step", dict(cell="GRU")),
    "cnn": ("cnn_step", "train_step", {}),
    "mlp": ("training_step", "mlp_sgd_step", {}),
}


def make_step(fw, name):
    module, function, kwargs = STEPS[name]
    return getattr(__import__(module), function)(fw, "cpu", **kwargs)


def _node_functions():
    """``{code object: (node class name, "forward" | "backward")}`` for every graph-node class."""
    from gputorch.autograd.node import Node
    found = {}
    stack = [Node]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        for part in ("forward", "backward"):
            fn = cls.__dict__.get(part)
            code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
            if code is not None:
                found.setdefault(code, (cls.__name__, part))
    return found


def profile_gputorch(name, steps):
    """``(ms per step unprofiled, {op: [forward ms, backward ms, forward calls]} per step)``."""
    import gputorch
    step = make_step(gputorch, name)
    for _ in range(2):
        step()
    start = time.process_time()
    for _ in range(steps):
        step()
    plain = (time.process_time() - start) / steps * 1e3
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    for _ in range(steps):
        step()
    profiler.disable()
    codes = _node_functions()
    by_key = {(c.co_filename, c.co_firstlineno, c.co_name): v for c, v in codes.items()}
    ops = collections.defaultdict(lambda: [0.0, 0.0, 0])
    profiler.create_stats()
    for (filename, line, func), (_, calls, _, cumulative, _) in profiler.stats.items():
        owner = by_key.get((filename, line, func))
        if owner is None:
            continue
        op, part = owner
        row = ops[op]
        row[0 if part == "forward" else 1] += cumulative / steps * 1e3
        if part == "forward":
            row[2] += calls // steps
    return plain, dict(ops)


def profile_torch(name, steps, top):
    """torch's operators by self CPU time (ms per step), or None without torch."""
    try:
        import torch
        from torch.profiler import profile
    except ImportError:
        return None
    step = make_step(torch, name)
    for _ in range(2):
        step()
    with profile() as prof:
        for _ in range(steps):
            step()
    rows = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:top]
    return [(e.key, e.self_cpu_time_total / steps / 1e3, e.count // steps) for e in rows]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=sorted(STEPS))
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    limit_threads(1)
    plain, ops = profile_gputorch(args.step, args.steps)
    print(f"## gputorch, {args.step}: {plain:.1f} ms per step (CPU time, unprofiled)\n")
    print("| op (graph node) | forward ms | backward ms | calls |\n| --- | ---: | ---: | ---: |")
    for op, (fwd, bwd, calls) in sorted(ops.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:args.top]:
        print(f"| {op} | {fwd:.2f} | {bwd:.2f} | {calls} |")
    theirs = profile_torch(args.step, args.steps, args.top)
    if theirs is not None:
        print(f"\n## torch, {args.step}: operators by self CPU time\n")
        print("| operator | self ms | calls |\n| --- | ---: | ---: |")
        for key, ms, calls in theirs:
            print(f"| {key} | {ms:.2f} | {calls} |")


if __name__ == "__main__":
    main()
