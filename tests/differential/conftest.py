"""Options and fixtures of the differential suite (gputorch against PyTorch).

Settings, each as a command-line option or an environment variable:

* ``--diff-cases N`` / ``GPUTORCH_DIFF_CASES``: cases per op (default 10);
  each nn.functional function and nn module gets 60% of that (rounded up),
  their cases being several times slower.
* ``--diff-seed S`` / ``GPUTORCH_DIFF_SEED``: base seed (default 0).
* ``--diff-devices cpu,cuda`` / ``GPUTORCH_DIFF_DEVICES``: devices to run
  gputorch on (default: ``cuda`` when ``gputorch.cuda.is_available()``,
  e.g. under ``GPUTORCH_SIMULATE_CUDA=2``, else ``cpu``); torch always runs
  on CPU.

pytest only reads ``pytest_addoption`` from conftest files it loads before
parsing the command line, so the options work when the run names this
directory (``pytest tests/differential``); in a run from the repository root
(``pytest tests``), use the environment variables instead.
"""
import math
import os

import pytest

import gputorch

from tests.differential import _report

DEFAULT_CASES = 10
DEFAULT_SEED = 0
NN_SHARE = 0.6


def pytest_addoption(parser):
    group = parser.getgroup("differential", "gputorch vs torch differential tests")
    group.addoption("--diff-cases", type=int, default=None, help="cases per op (GPUTORCH_DIFF_CASES)")
    group.addoption("--diff-seed", type=int, default=None, help="base seed (GPUTORCH_DIFF_SEED)")
    group.addoption("--diff-devices", default=None, help="comma-separated devices (GPUTORCH_DIFF_DEVICES)")


def _setting(config, option, env, default):
    value = config.getoption(option, default=None) if config is not None else None
    if value is None:
        value = os.environ.get(env)
    return default if value is None or value == "" else value


def diff_devices(config):
    default = "cuda" if gputorch.cuda.is_available() else "cpu"
    names = [d.strip() for d in str(_setting(config, "diff_devices", "GPUTORCH_DIFF_DEVICES", default)).split(",")]
    return [d for d in names if d]


def pytest_generate_tests(metafunc):
    if "diff_device" in metafunc.fixturenames:
        metafunc.parametrize("diff_device", diff_devices(metafunc.config))


@pytest.fixture
def diff_cases(request):
    """Number of cases per op."""
    return int(_setting(request.config, "diff_cases", "GPUTORCH_DIFF_CASES", DEFAULT_CASES))


@pytest.fixture
def diff_nn_cases(diff_cases):
    """Number of cases per nn.functional function or nn module."""
    return max(1, math.ceil(diff_cases * NN_SHARE))


@pytest.fixture
def diff_seed(request):
    """Base seed of every case."""
    return int(_setting(request.config, "diff_seed", "GPUTORCH_DIFF_SEED", DEFAULT_SEED))


@pytest.fixture(autouse=True)
def _device_available(request):
    device = request.node.callspec.params.get("diff_device") if hasattr(request.node, "callspec") else None
    if device == "cuda" and not gputorch.cuda.is_available():
        pytest.skip("CUDA is not available (set GPUTORCH_SIMULATE_CUDA=2 for the simulated GPU)")


def pytest_terminal_summary(terminalreporter):
    for line in _report.summary_lines():
        terminalreporter.write_line(line)
    _report.write_json_report()
