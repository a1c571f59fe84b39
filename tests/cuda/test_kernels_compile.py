"""Every CUDA kernel (every template instantiation the wrappers launch) compiles with NVRTC for
sm_70, sm_80 and sm_90, without a GPU; where nvcc exists, ``nvcc --cubin --resource-usage``
shows no local-memory spills. Compile errors are reported against the kernel file and line."""
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

from gputorch.cuda.kernels import _module, nvrtc
from gputorch.cuda.kernels._source import FAMILIES, KERNEL_DIR, Family, load_all_families

load_all_families()
FAMILY_NAMES = sorted(FAMILIES)


@pytest.fixture(scope="module")
def nvrtc_lib():
    try:
        return nvrtc.load_nvrtc()
    except nvrtc.NvrtcUnavailable as e:
        pytest.skip(f"NVRTC cannot be loaded: {e}")


def test_every_kernel_file_has_a_family():
    sources = {p.name for p in KERNEL_DIR.glob("*.cu")}
    assert sources == {f.filename for f in FAMILIES.values()}
    assert (KERNEL_DIR / "common.cuh").is_file()
    for fam in FAMILIES.values():
        assert fam.names, fam
        assert len(set(fam.names)) == len(fam.names), f"duplicate name expressions in {fam.filename}"


@pytest.fixture(scope="module")
def compiled(nvrtc_lib):
    """Every (family, arch) compile, run once for the module in parallel threads (successful
    results are remembered on disk, keyed by the sources, options and NVRTC version)."""
    major, _ = nvrtc.nvrtc_version()
    archs = [a for a in nvrtc.ARCHS if major < 13 or a != "sm_70"]   # CUDA 13's NVRTC dropped sm_70
    return {(r.family, r.arch): r for r in nvrtc.check_all(archs)}


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_family_compiles_for_every_arch(compiled, family):
    results = [r for (fam, _), r in compiled.items() if fam == family]
    assert len(results) >= 2
    for r in results:
        assert r.ok, f"{family} does not compile for {r.arch}:\n{r.log}"
        assert set(r.lowered) == set(FAMILIES[family].names)
        assert all(name for name in r.lowered.values())
        assert r.cubin_size > 0


def test_sm70_is_checked_with_a_cuda12_nvrtc(nvrtc_lib):
    major, _ = nvrtc.nvrtc_version()
    if major >= 13:
        pytest.skip("only a CUDA 13 NVRTC was found: install nvidia-cuda-nvrtc-cu12 for the sm_70 check")
    assert nvrtc.compile_family("dropout", "sm_70").ok


def test_compile_error_names_file_and_line(nvrtc_lib, tmp_path):
    (tmp_path / "broken.cu").write_text('#include "common.cuh"\n\ntemplate <typename T>\n'
                                        '__global__ void broken(T* x) { x[0] = undefined_thing; }\n')
    fam = Family("broken_test", "broken.cu", ["broken<float>"], directory=tmp_path)
    result = nvrtc.compile_family(fam, "sm_80")
    assert not result.ok
    (file, line, message), = result.errors()[:1]
    assert file.endswith("broken.cu") and line == 4 and "undefined_thing" in message
    FAMILIES["broken_test"] = fam
    try:
        err = _module.compile_error("broken_test", result.log)
    finally:
        del FAMILIES["broken_test"]
    assert isinstance(err, _module.KernelCompileError)
    assert err.file.endswith("broken.cu") and err.line == 4
    assert "broken.cu, line 4" in str(err)


@pytest.fixture(scope="module")
def resources():
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(FAMILY_NAMES, pool.map(lambda fam: nvrtc.resource_usage(fam, "sm_80"), FAMILY_NAMES)))


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_no_local_memory_spills(resources, family):
    usage = resources[family]
    assert len(usage) == len(FAMILIES[family].names)
    for kernel, u in usage.items():
        assert u["spill_stores"] == 0 and u["spill_loads"] == 0, f"{kernel} spills: {u}"
        assert u["stack"] == 0, f"{kernel} uses a stack frame (local memory): {u}"
        assert 0 < u["registers"] <= 255


def test_occupancy_model():
    assert nvrtc.occupancy(32, 256) == 1.0
    assert nvrtc.occupancy(64, 256) == 0.5
    assert nvrtc.occupancy(255, 128, arch="sm_80") < 0.2
