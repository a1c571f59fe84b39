"""One command for a machine with a real GPU: tests, kernel benchmark and examples, one report.

    python -m bench.gpu_check [--out DIR] [--quick] [--skip tests,bench,examples] [--budget SECONDS]
    python bench/gpu_check.py ...

On a machine with an NVIDIA GPU and CuPy (``pip install gputorch[cuda12]`` or ``[cuda13]``):

1. **tests**: the test suite's CUDA cases on the real device (``tests/cuda``, ``tests/backends``
   and every test parametrized with ``device=cuda``, ``-k cuda`` elsewhere), through pytest;
2. **bench**: ``bench/kernels.py --device cuda``: each kernel's bandwidth against the NVML peak and
   its time against PyTorch CUDA when torch with CUDA is installed;
3. **examples**: a short training run of each example in ``gputorch/examples`` on ``cuda``
   (MNIST LeNet on generated IDX files, as the machine may have no network).

It writes ``gpu_check.md`` and ``gpu_check.json`` to ``--out`` (default ``bench/results``), the
steps' outputs beside them, and exits 1 when a step failed. Each step has a time limit, and all
of them share ``--budget`` seconds (default 570), so the run ends within 10 minutes; on one H100
most of it is the first compile of the kernels. A step the budget leaves no time for is "not run".

Without a GPU (or without CuPy, or with the simulated device switched on) it exits with status 2
and a message saying what is missing: the simulated device is for the test suite, not for this.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)
STEPS = ("tests", "bench", "examples")
EXIT_NO_GPU = 2

# (name, command after `python`, time limit in seconds); {data} is a folder of generated MNIST files.
EXAMPLES = [
    ("quickstart", ["-c", "from gputorch.examples import quickstart; "
                          "s = quickstart.main(device='cuda', epochs=60, log_every=20); "
                          "print('accuracy', s['accuracy'])"], 120),
    ("demo", ["-m", "gputorch", "demo", "--device", "cuda", "--epochs", "2", "--no-progress",
              "--out", "{out}/demo"], 180),
    ("mnist1d", ["-m", "gputorch.examples.mnist1d", "--device", "cuda", "--steps", "200"], 180),
    ("char_transformer", ["-m", "gputorch.examples.char_transformer", "--device", "cuda", "--steps", "30",
                          "--checkpoint", "both"], 180),
    ("mnist_lenet", ["-m", "gputorch.examples.mnist_lenet", "--device", "cuda", "--data", "{data}",
                     "--epochs", "1", "--limit", "2048", "--workers", "0"], 180),
    ("devices", ["-m", "gputorch.examples.devices", "--device", "cuda"], 120),
]


def gpu_problem():
    """Why this machine cannot run the check (a sentence), or None when it has a usable GPU."""
    if os.environ.get("GPUTORCH_SIMULATE_CUDA"):
        return ("GPUTORCH_SIMULATE_CUDA is set: the simulated CUDA device is for the test suite; unset it to "
                "check a real GPU")
    try:
        import cupy
    except ImportError as e:
        return f"CuPy is not installed ({e}); install gputorch[cuda12] or gputorch[cuda13]"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDARuntimeError: no driver, or a driver older than CuPy's CUDA
        return f"no CUDA device is visible ({type(e).__name__}: {e})"
    if count < 1:
        return "no CUDA device is visible"
    return None


def device_info():
    """Name, memory, compute capability, driver and runtime versions of device 0, and the versions
    of CuPy, NumPy and torch."""
    import cupy
    import numpy
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"]
    info = {
        "gpu": name.decode() if isinstance(name, bytes) else str(name),
        "gpu_count": cupy.cuda.runtime.getDeviceCount(),
        "memory_bytes": int(props["totalGlobalMem"]),
        "compute_capability": f"{props['major']}.{props['minor']}",
        "driver_version": cupy.cuda.runtime.driverGetVersion(),
        "runtime_version": cupy.cuda.runtime.runtimeGetVersion(),
        "cupy": cupy.__version__, "numpy": numpy.__version__, "python": platform.python_version(),
    }
    try:
        import torch
        info["torch"] = torch.__version__
        info["torch_cuda"] = bool(torch.cuda.is_available())
    except ImportError:
        info["torch"] = None
    return info


def _tail(text, lines=30):
    return "\n".join(text.splitlines()[-lines:])


_deadline = [float("inf")]   # perf_counter time by which every step must be done (--budget)


def run_command(name, args, timeout, log_dir, env=None):
    """Run ``python *args`` from the repository root; a result dict with the exit status, the time
    and the output's tail (the whole output goes to ``log_dir/<name>.log``). The time limit is
    ``timeout`` or what is left of the run's budget, whichever is less."""
    start = time.perf_counter()
    timeout = min(timeout, _deadline[0] - start)
    if timeout < 5:
        return {"name": name, "command": " ".join(["python", *args]), "ok": False, "status": "not run",
                "seconds": 0.0, "log": None, "tail": "not run: the time budget (--budget) was spent"}
    child_env = dict(os.environ if env is None else env)
    child_env.pop("GPUTORCH_SIMULATE_CUDA", None)
    child_env["PYTHONPATH"] = REPO + os.pathsep + child_env.get("PYTHONPATH", "")
    try:
        proc = subprocess.run([sys.executable, *args], cwd=REPO, env=child_env, capture_output=True, text=True,
                              timeout=timeout)
        status, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout or b""
        output = (out.decode(errors="replace") if isinstance(out, bytes) else out) + f"\nTIMED OUT after {timeout} s"
        status = "timeout"
    seconds = time.perf_counter() - start
    log = os.path.join(log_dir, f"{name}.log")
    with open(log, "w") as f:
        f.write(output)
    return {"name": name, "command": " ".join(["python", *args]), "ok": status == 0, "status": status,
            "seconds": round(seconds, 1), "log": log, "tail": _tail(output)}


def write_mnist_files(folder, n_train=2048, n_test=512, seed=0):
    """Four IDX files shaped like MNIST's, from a fixed generator: class ``k`` is a bright square at a
    position of its own plus noise, so LeNet can learn it in one epoch."""
    import numpy as np
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)

    def images_and_labels(n):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        images = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
        for i, k in enumerate(labels):
            r, c = 2 + 5 * (k // 4), 2 + 6 * (k % 4)
            images[i, r:r + 6, c:c + 6] = 250
        return images, labels

    def write(path, array, magic):
        with open(path, "wb") as f:
            f.write(bytes([0, 0, magic, array.ndim]))
            f.write(np.asarray(array.shape, dtype=">u4").tobytes())
            f.write(array.tobytes())

    for split, n in (("train", n_train), ("t10k", n_test)):
        images, labels = images_and_labels(n)
        write(os.path.join(folder, f"{split}-images-idx3-ubyte"), images, 0x08)
        write(os.path.join(folder, f"{split}-labels-idx1-ubyte"), labels, 0x08)
    return folder


def run_tests(out, quick):
    junit = os.path.join(out, "gpu_check_tests.xml")
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", "tests/cuda", "tests/backends"]
    first = run_command("tests_cuda", args, 240 if quick else 300, out)
    rest = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "cuda", "tests", "--ignore=tests/cuda",
            "--ignore=tests/backends", "--ignore=tests/differential"]
    if quick:
        rest.append("-x")
    second = run_command("tests_device_cuda", rest, 180 if quick else 240, out)
    return [first, second]


def run_bench(out, quick):
    args = [os.path.join("bench", "kernels.py"), "--device", "cuda"] + (["--quick"] if quick else [])
    result = run_command("bench_kernels", args, 180, out)
    if result["log"]:
        with open(result["log"]) as f:
            result["tail"] = _tail(f.read(), 60)
    return [result]


def run_examples(out, quick):
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        data = write_mnist_files(os.path.join(tmp, "mnist"))
        for name, args, limit in EXAMPLES:
            args = [a.format(out=out, data=data) for a in args]
            results.append(run_command(f"example_{name}", args, limit // 2 if quick else limit, out))
    return results


def _summary_line(text):
    """The pytest summary ("12 passed, 1 skipped in 3.2s") from an output tail, or ''."""
    for line in reversed(text.splitlines()):
        if " passed" in line or " failed" in line or " error" in line:
            return line.strip("= ")
    return ""


def render_markdown(report):
    env = report["environment"]
    lines = [f"# gputorch GPU check", "",
             f"{report['date']}: {env.get('gpu')} ({env.get('memory_bytes', 0) / 2**30:.0f} GiB, compute "
             f"capability {env.get('compute_capability')}), driver {env.get('driver_version')}, CUDA runtime "
             f"{env.get('runtime_version')}, CuPy {env.get('cupy')}, NumPy {env.get('numpy')}, torch "
             f"{env.get('torch') or 'not installed'}; {report['seconds']:.0f} s in all.", "",
             f"**{'PASSED' if report['ok'] else 'FAILED'}**", "",
             "| step | result | seconds | notes |", "| --- | --- | ---: | --- |"]
    for step in report["steps"]:
        result = "ok" if step["ok"] else f"FAILED ({step['status']})"
        lines.append(f"| {step['name']} | {result} | {step['seconds']:.0f} | {_summary_line(step['tail'])} |")
    for step in report["steps"]:
        if step["name"] == "bench_kernels" or not step["ok"]:
            lines += ["", f"## {step['name']}", "", f"`{step['command']}` (full output: {step['log']})", "",
                      "```", step["tail"], "```"]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run the CUDA tests, the kernel benchmark and the examples on "
                                                 "this machine's GPU; write one Markdown + JSON report.")
    parser.add_argument("--out", default=os.path.join(BENCH_DIR, "results"),
                        help="folder for gpu_check.md, gpu_check.json and the logs (default bench/results)")
    parser.add_argument("--quick", action="store_true", help="shorter benchmark samples and time limits")
    parser.add_argument("--skip", default="", help=f"comma-separated steps to leave out ({', '.join(STEPS)})")
    parser.add_argument("--budget", type=float, default=570.0,
                        help="seconds for all the steps together (default 570: under 10 minutes in all)")
    args = parser.parse_args(argv)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    unknown = skip - set(STEPS)
    if unknown:
        parser.error(f"--skip: unknown step(s) {', '.join(sorted(unknown))}; choose from {', '.join(STEPS)}")

    problem = gpu_problem()
    if problem:
        print(f"gpu_check needs a machine with an NVIDIA GPU and CuPy: {problem}.", file=sys.stderr)
        return EXIT_NO_GPU

    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    start = time.perf_counter()
    _deadline[0] = start + args.budget
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "environment": device_info(), "quick": args.quick, "steps": []}
    runners = {"tests": run_tests, "bench": run_bench, "examples": run_examples}
    for step in STEPS:
        if step in skip:
            continue
        print(f"gpu_check: {step} ...", flush=True)
        for result in runners[step](out, args.quick):
            print(f"  {result['name']}: {'ok' if result['ok'] else 'FAILED'} ({result['seconds']:.0f} s)", flush=True)
            report["steps"].append(result)
    report["seconds"] = time.perf_counter() - start
    report["ok"] = all(s["ok"] for s in report["steps"])
    with open(os.path.join(out, "gpu_check.json"), "w") as f:
        json.dump(report, f, indent=2)
    with open(os.path.join(out, "gpu_check.md"), "w") as f:
        f.write(render_markdown(report))
    print(f"gpu_check: {'PASSED' if report['ok'] else 'FAILED'} in {report['seconds']:.0f} s; "
          f"wrote {os.path.join(out, 'gpu_check.md')} and gpu_check.json")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
