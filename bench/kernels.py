"""The CUDA kernels (kernels/*.cu): what can be measured without a GPU, and their speed on one.

Everywhere (no GPU needed):
  * compile time of each kernel file with NVRTC for sm_80 (every template instantiation the
    wrappers launch), from the ``nvidia-cuda-nvrtc-cu12`` wheel;
  * registers per thread, shared memory and spills per kernel from ``nvcc --cubin
    --resource-usage`` (where nvcc exists), and the theoretical occupancy at the launch's block
    size (sm_80: 64 warps and 64K registers per SM).

On a GPU (``--device cuda`` with the real CuPy; not the simulated device):
  * each kernel's achieved memory bandwidth (bytes it must move / time) against the device's
    peak, read from NVML (nvidia-ml-py: memory clock x bus width x 2);
  * the same op in PyTorch CUDA (when torch is installed), and the ratio.
  Cases use the public gputorch API on CUDA tensors, so they time what users get: the backend's
  kernel plus the per-op overhead.

Run alone: ``python bench/kernels.py [--device cuda] [--quick]``, or through ``bench/run_all.py``.
"""
import math
import os
import sys

if __package__ in (None, ""):  # run as a script: benchmark this checkout, import timing.py beside us
    sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.path.dirname(__file__)]

from timing import framework_sync, measure, run_alone  # noqa: E402

TITLE = "CUDA kernels: compile time and resources (any machine); bandwidth and time vs PyTorch (GPU)"

ARCH = "sm_80"


# ---------------------------------------------------------------------------- without a GPU
def _block_size(kernel):
    if "_warp<" in kernel:
        return 128
    if "multi_tensor_sgd" in kernel or "multi_tensor_adam" in kernel:
        return 512
    return 256


def compile_rows(quick=False):
    """One row per kernel file: NVRTC compile time, kernel count, registers, occupancy, spills."""
    from gputorch.cuda.kernels import nvrtc
    from gputorch.cuda.kernels._source import FAMILIES, load_all_families
    load_all_families()
    rows = []
    try:
        version = "NVRTC %d.%d" % nvrtc.nvrtc_version()
    except nvrtc.NvrtcUnavailable as e:
        return [{"kind": "note", "text": f"NVRTC unavailable ({e}): no compile figures"}]
    for name, fam in FAMILIES.items():
        row = {"kind": "compile", "file": fam.filename, "kernels": len(fam.names), "compiler": version}
        result = (nvrtc.compile_family_cached if quick else nvrtc.compile_family)(fam, ARCH)
        row["compile_s"] = result.seconds if result.seconds else None
        row["ok"] = result.ok
        try:
            usage = nvrtc.resource_usage(fam, ARCH)
        except RuntimeError as e:
            usage, row["nvcc_error"] = None, str(e).splitlines()[0]
        if usage:
            regs = [u["registers"] for u in usage.values()]
            occ = [nvrtc.occupancy(u["registers"], _block_size(k), u["smem"], ARCH) for k, u in usage.items()]
            row.update(max_registers=max(regs), min_registers=min(regs), min_occupancy=min(occ),
                       max_occupancy=max(occ), spill_bytes=sum(u["spill_stores"] + u["spill_loads"]
                                                               for u in usage.values()),
                       max_smem=max(u["smem"] for u in usage.values()))
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------- on a GPU
def peak_bandwidth(index=0):
    """The device's peak memory bandwidth in bytes/s from NVML, or None."""
    try:
        import pynvml
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        clock_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)
        bus_bits = pynvml.nvmlDeviceGetMemoryBusWidth(handle)
        name = pynvml.nvmlDeviceGetName(handle)
        return clock_mhz * 1e6 * 2 * bus_bits / 8, (name.decode() if isinstance(name, bytes) else name)
    except Exception:
        return None, None


def _cases(quick):
    """``(name, bytes moved, builder)``; ``builder(fw, device)`` returns a zero-argument step."""
    n = (1 << 22) if quick else (1 << 26)
    rows, cols = (1024, 1024) if quick else (8192, 4096)
    vocab_rows, vocab = (512, 32000) if quick else (4096, 32000)
    params = [(1024, 1024)] * (8 if quick else 64) + [(1024,)] * 64

    def elementwise(op):
        def build(fw, device):
            x = fw.randn(n, device=device)
            return lambda: op(fw, x)
        return build

    def softmax(fw, device):
        x = fw.randn(rows, cols, device=device)
        return lambda: x.softmax(-1)

    def layer_norm(fw, device):
        x = fw.randn(rows, cols, device=device, requires_grad=True)
        w = fw.ones(cols, device=device, requires_grad=True)
        b = fw.zeros(cols, device=device, requires_grad=True)
        g = fw.randn(rows, cols, device=device)

        def step():
            y = fw.nn.functional.layer_norm(x, (cols,), w, b)
            y.backward(g)
        return step

    def cross_entropy(fw, device):
        x = fw.randn(vocab_rows, vocab, device=device, requires_grad=True)
        t = fw.randint(0, vocab, (vocab_rows,), device=device)

        def step():
            fw.nn.functional.cross_entropy(x, t, label_smoothing=0.1).backward()
        return step

    def adam(fw, device):
        ps = [fw.zeros(*s, device=device, requires_grad=True) for s in params]
        for p in ps:
            p.grad = fw.randn(*p.shape, device=device)
        opt = fw.optim.Adam(ps, lr=1e-3)
        return opt.step

    def clip(fw, device):
        ps = [fw.zeros(*s, device=device, requires_grad=True) for s in params]
        for p in ps:
            p.grad = fw.randn(*p.shape, device=device)
        return lambda: fw.nn.utils.clip_grad_norm_(ps, 1.0)

    def dropout(fw, device):
        x = fw.randn(n, device=device)
        return lambda: fw.nn.functional.dropout(x, 0.1)

    def max_pool(fw, device):
        x = fw.randn(64, 64, 112 if not quick else 56, 112 if not quick else 56, device=device)
        return lambda: fw.nn.functional.max_pool2d(x, 2)

    pool_n = 64 * 64 * (112 if not quick else 56) ** 2
    param_n = sum(math.prod(s) for s in params)
    return [
        ("relu", 8 * n, elementwise(lambda fw, x: fw.relu(x))),
        ("gelu", 8 * n, elementwise(lambda fw, x: fw.nn.functional.gelu(x))),
        ("sigmoid", 8 * n, elementwise(lambda fw, x: fw.sigmoid(x))),
        ("dropout p=0.1", 8 * n, dropout),
        ("softmax rows", 8 * rows * cols, softmax),
        ("layer_norm fwd+bwd", 4 * rows * cols * 5, layer_norm),
        ("cross_entropy fwd+bwd (32000 classes)", 4 * vocab_rows * vocab * 4, cross_entropy),
        ("max_pool2d 2x2", pool_n * 4 + pool_n // 4 * 12, max_pool),
        ("Adam step (multi-tensor)", 4 * param_n * 7, adam),
        ("clip_grad_norm_ (sum of squares)", 4 * param_n * 3, clip),
    ]


def gpu_rows(device, quick):
    import gputorch
    from timing import frameworks
    rows = []
    peak, name = peak_bandwidth(gputorch.device(device).index or 0)
    fws = [(n, fw) for n, fw in frameworks() if n == "gputorch" or fw.cuda.is_available()]
    timing = {"sample_s": 0.02, "repeat": 3, "warmup_s": 0.02} if quick else {"sample_s": 0.2, "repeat": 7}
    for case, nbytes, build in _cases(quick):
        row = {"kind": "gpu", "benchmark": case, "bytes": nbytes, "peak_bytes_s": peak, "gpu": name}
        for fw_name, fw in fws:
            try:
                step = build(fw, device)
                row[fw_name] = measure(step, sync=framework_sync(fw, device), **timing)
            except Exception as e:
                row[fw_name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}"}
        g, t = row.get("gputorch", {}), row.get("torch", {})
        if "median_us" in g:
            row["bandwidth_bytes_s"] = nbytes / (g["median_us"] * 1e-6)
            if peak:
                row["fraction_of_peak"] = row["bandwidth_bytes_s"] / peak
        if "median_us" in g and "median_us" in t:
            row["ratio"] = g["median_us"] / t["median_us"]
        rows.append(row)
    return rows


def _real_gpu(device):
    if not str(device).startswith("cuda"):
        return False, "the device is the CPU"
    if os.environ.get("GPUTORCH_SIMULATE_CUDA"):
        return False, "the CUDA device is simulated (GPUTORCH_SIMULATE_CUDA)"
    import gputorch
    if not gputorch.cuda.is_available():
        return False, "no CUDA device is available"
    return True, None


def run(device="cpu", quick=False):
    rows = compile_rows(quick)
    real, why = _real_gpu(device)
    if real:
        import time
        from gputorch.cuda.kernels import precompile
        start = time.perf_counter()
        precompile(verbose=False)
        rows.append({"kind": "note", "text": f"CuPy precompile of every kernel: {time.perf_counter() - start:.1f} s "
                                             "(first process; later ones load CuPy's disk cache)"})
        rows += gpu_rows(device, quick)
    else:
        rows.append({"kind": "note", "text": f"Bandwidth and time against PyTorch need a GPU ({why}): run "
                                             "`python bench/kernels.py --device cuda` on a machine with one."})
    return rows


def format_table(rows):
    out = []
    compile_rows_ = [r for r in rows if r["kind"] == "compile"]
    if compile_rows_:
        out += [f"Compile ({compile_rows_[0]['compiler']}, {ARCH}) and resources (nvcc --resource-usage, {ARCH}; "
                "occupancy at the launch block size):", "",
                "| kernel file | kernels | NVRTC compile (s) | registers (min-max) | occupancy (min-max) | "
                "smem (B) | spills (B) |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in compile_rows_:
            secs = "cached" if r["compile_s"] is None else f"{r['compile_s']:.2f}"
            if not r["ok"]:
                secs += " FAILED"
            if "max_registers" in r:
                res = (f"{r['min_registers']}-{r['max_registers']} | "
                       f"{r['min_occupancy']:.0%}-{r['max_occupancy']:.0%} | {r['max_smem']} | {r['spill_bytes']}")
            else:
                res = f"n/a | n/a | n/a | {r.get('nvcc_error', 'no nvcc')}"
            out.append(f"| {r['file']} | {r['kernels']} | {secs} | {res} |")
        out.append("")
    gpu = [r for r in rows if r["kind"] == "gpu"]
    if gpu:
        peak = gpu[0]["peak_bytes_s"]
        out += [f"On {gpu[0]['gpu'] or 'the GPU'} (peak {peak / 1e9:.0f} GB/s from NVML):" if peak else
                "On the GPU (NVML unavailable: no peak bandwidth):", "",
                "| op | gputorch (us) | GB/s | % of peak | torch (us) | gputorch/torch |",
                "| --- | ---: | ---: | ---: | ---: | ---: |"]

        def cell(res):
            if res is None:
                return "n/a"
            return f"error ({res['error']})" if "error" in res else f"{res['median_us']:.1f}"
        for r in gpu:
            bw = f"{r['bandwidth_bytes_s'] / 1e9:.0f}" if "bandwidth_bytes_s" in r else "n/a"
            frac = f"{r['fraction_of_peak']:.0%}" if "fraction_of_peak" in r else "n/a"
            ratio = f"{r['ratio']:.2f}x" if "ratio" in r else "n/a"
            out.append(f"| {r['benchmark']} | {cell(r.get('gputorch'))} | {bw} | {frac} | {cell(r.get('torch'))} | "
                       f"{ratio} |")
        out.append("")
    out += [r["text"] for r in rows if r["kind"] == "note"]
    return "\n".join(out)


def main(argv=None):
    run_alone(TITLE, run, format_table, argv)


if __name__ == "__main__":
    main()
