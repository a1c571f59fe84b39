"""``python -m gputorch.profiler [options] script.py [args...]``: run an unmodified training script
under the memory profiler, print the report and write the HTML page.

The script runs as ``__main__`` (``sys.argv`` is ``[script.py, args...]``, its folder first on
``sys.path``). Modules, optimizers and steps are found through the global module and optimizer
hooks; the first module called outside any other is taken as the model (path ``""``).
"""
import argparse
import os
import runpy
import sys

from .profiler import MemoryProfiler


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m gputorch.profiler",
        description="Run a gputorch training script under the memory profiler.")
    parser.add_argument("--html", default="memory_profile.html",
                        help="where to write the HTML report (default: memory_profile.html; '' for none)")
    parser.add_argument("--json", default=None, help="also write the report as JSON here")
    parser.add_argument("--snapshot", default=None,
                        help="also write a snapshot for PyTorch's memory visualizer (pytorch.org/memory_viz)")
    parser.add_argument("--device", default=None, help="track only this device or device type (cuda, cuda:0)")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    opts = parser.parse_args(argv)

    script = os.path.abspath(opts.script)
    if not os.path.exists(script):
        parser.error(f"no such script: {opts.script}")
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [script] + list(opts.args)
    sys.path.insert(0, os.path.dirname(script))
    prof = MemoryProfiler(device=opts.device)
    status = 0
    try:
        with prof:
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit as e:
                status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        if prof.tracker is not None:
            report = prof.report()
            print("\n" + str(report))
            if opts.html:
                report.save_html(opts.html)
                print(f"memory report written to {opts.html}")
            if opts.json:
                report.save_json(opts.json)
            if opts.snapshot:
                prof.export_memory_snapshot(opts.snapshot)
    return status


if __name__ == "__main__":
    sys.exit(main())
