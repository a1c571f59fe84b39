"""Packaging and command line: imports need NumPy only, the CLI reports bad devices in one line,
and (in CI, against a real install) the installed files match the source tree."""
import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gputorch
from gputorch.__main__ import main

REPO = Path(__file__).resolve().parents[1]
PACKAGE_PARENT = str(Path(gputorch.__file__).resolve().parents[1])


def run_python(*args, timeout=120):
    """Run ``python *args`` importing the same gputorch as this test process (source tree or install)."""
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=PACKAGE_PARENT, env=env)


def test_import_needs_only_numpy():
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import gputorch, gputorch.autograd, gputorch.cuda\n"
        "x = gputorch.ones(3, requires_grad=True)\n"
        "(x * 2).sum().backward()\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "third_party = sorted(m for m in new if m not in sys.stdlib_module_names\n"
        "                     and m not in ('numpy', 'gputorch') and not m.startswith('_')\n"
        "                     and getattr(sys.modules[m], '__file__', None))  # cython_runtime has none\n"
        "print('THIRD_PARTY', third_party)\n"
        "print('CUPY', 'cupy' in sys.modules)\n")
    r = run_python("-c", code)
    assert r.returncode == 0, r.stderr
    assert "THIRD_PARTY []" in r.stdout, r.stdout
    assert "CUPY False" in r.stdout, r.stdout


def test_import_does_not_import_cupy_or_torch():
    r = run_python("-c", "import sys, gputorch; print(sorted(m for m in ('cupy', 'torch', 'scipy') "
                         "if m in sys.modules))")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_version():
    assert isinstance(gputorch.__version__, str)
    assert gputorch.__version__.count(".") >= 2


@pytest.mark.parametrize("argv", [["--device", "nonsense"], ["quickstart", "--device", "nonsense"],
                                  ["--device", "cuda:x"], ["--device", "cpu:1"]])
def test_cli_bad_device_is_one_line_exit_2(argv):
    r = run_python("-m", "gputorch", *argv)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert "invalid device" in lines[0] and argv[-1] in lines[0]
    assert "cpu" in lines[0] and "cuda" in lines[0]  # says what is valid
    assert r.stdout == ""


def test_cli_bad_device_in_process(capsys):
    assert main(["--device", "gpu"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gputorch: error: invalid device 'gpu'")


@pytest.mark.skipif(gputorch.cuda.is_available(), reason="needs a machine without a usable GPU")
@pytest.mark.parametrize("spec", ["cuda", "cuda:0", "cuda:3"])
def test_cli_cuda_without_gpu_explains(spec):
    r = run_python("-m", "gputorch", "--device", spec)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "CUDA is not available" in lines[0]
    assert "--device cpu" in lines[0]
    assert r.stdout == ""


def test_cli_help_lists_commands(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "quickstart" in out and "--device" in out


def test_cli_unknown_command_is_usage_error():
    r = run_python("-m", "gputorch", "nosuchcommand")
    assert r.returncode == 2
    assert "invalid choice" in r.stderr and "Traceback" not in r.stderr


# --- the installed package (CI installs with `pip install .` and sets GPUTORCH_TEST_INSTALLED=1) ---

installed_only = pytest.mark.skipif(os.environ.get("GPUTORCH_TEST_INSTALLED") != "1",
                                    reason="set GPUTORCH_TEST_INSTALLED=1 to check a non-editable install")


def _installed_distribution():
    """gputorch's metadata in site-packages; not a ``gputorch.egg-info`` that a build left in the
    source tree (the repository root is first on sys.path, so plain lookups find that one first)."""
    import sysconfig
    site = sysconfig.get_paths()["purelib"]
    found = list(importlib.metadata.distributions(name="gputorch", path=[site]))
    assert found, f"gputorch is not installed in {site}"
    return found[0]


def _installed_files():
    files = _installed_distribution().files
    assert files, "gputorch is installed without a RECORD"
    return {f.as_posix() for f in files}


@installed_only
def test_installed_version_matches_source():
    assert _installed_distribution().version == gputorch.__version__


@installed_only
def test_installed_package_has_every_source_module():
    installed = _installed_files()
    assert not any("__editable__" in f for f in installed), "expected a non-editable install"
    source = {p.relative_to(REPO).as_posix() for p in (REPO / "gputorch").rglob("*.py")
              if "__pycache__" not in p.parts}
    assert source, f"no gputorch sources under {REPO}"
    missing = sorted(source - installed)
    assert not missing, f"modules missing from the installed package: {missing}"


@installed_only
def test_installed_package_ships_kernels():
    installed = _installed_files()
    kernels = {f"gputorch/_kernels/{p.name}" for p in (REPO / "kernels").glob("*")
               if p.suffix in (".cu", ".cuh", ".h", ".hpp")}
    missing = sorted(kernels - installed)
    assert not missing, f"CUDA sources missing from the installed package: {missing}"


@installed_only
def test_installed_console_script_runs():
    script = Path(sys.executable).with_name("gputorch")
    assert script.exists(), f"no console script at {script}"
    r = subprocess.run([str(script), "--device", "nonsense"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "invalid device" in r.stderr


# --- the GPU extras: CuPy with its own CUDA toolkit wheels (`ctk`), so a driver-only machine works ---

CUDA_EXTRAS = {"cuda12": "cupy-cuda12x", "cuda13": "cupy-cuda13x"}


def _extra_requirements(requires, extra):
    """The requirement strings of ``requires`` (importlib.metadata form) that belong to ``extra``."""
    marker = f'extra == "{extra}"'
    return [r.split(";")[0].strip() for r in requires or () if marker in r.replace("'", '"')]


def _assert_cuda_extras(requires):
    for extra, package in CUDA_EXTRAS.items():
        found = _extra_requirements(requires, extra)
        assert len(found) == 1, (extra, found)
        name, _, rest = found[0].partition("[")
        assert name == package, found
        extras, _, version = rest.partition("]")
        assert "ctk" in [e.strip() for e in extras.split(",")], found
        assert version.replace(" ", "").startswith(">=14"), found  # CuPy 14 has the ctk extra


def test_pyproject_cuda_extras_use_cupys_ctk():
    import tomllib
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    requires = [f'{r}; extra == "{extra}"' for extra in CUDA_EXTRAS for r in extras[extra]]
    _assert_cuda_extras(requires)
    assert _extra_requirements(requires, "cuda12") == ["cupy-cuda12x[ctk]>=14"]


@installed_only
def test_installed_metadata_asks_for_cupy_with_ctk():
    _assert_cuda_extras(_installed_distribution().requires)
