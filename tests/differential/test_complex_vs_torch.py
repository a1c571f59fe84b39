"""Complex numbers and ``torch.fft`` must behave like torch.

The op table's cases draw real dtypes only; here the ops that take complex tensors run with complex
(and mixed real/complex) operands, forward and backward (a real loss over the real and imaginary
parts), and every ``torch.fft`` function runs with its ``n``/``s``, ``dim`` and ``norm`` options on
real, complex and refused (float16, integer) inputs. Same seeds, repros and report as the op table.
"""
import pytest

torch = pytest.importorskip("torch")

import gputorch  # noqa: E402

from tests.differential import _op_table, _report, _specs_complex  # noqa: E402

COMPLEX_PLAN = sorted(_specs_complex.COMPLEX_CASES.items())
FFT_PLAN = sorted(_specs_complex.FFT.items())
WINDOW_PLAN = sorted(_specs_complex.SIGNAL_WINDOWS.items())
LINALG_PLAN = sorted(_specs_complex.COMPLEX_LINALG.items())


def _fail_if_any(group, device, seed, cases):
    failures = _report.run_cases(group, cases, torch, gputorch, device, seed)
    if failures:
        pytest.fail(_report.failure_message(group, device, seed, len(cases), failures), pytrace=False)


@pytest.mark.parametrize("name,entry", COMPLEX_PLAN, ids=[name for name, _ in COMPLEX_PLAN])
def test_complex_op_matches_torch(name, entry, diff_device, diff_cases, diff_seed):
    forms, generator = entry
    cases = [_op_table.make_case(f"{name}", forms, "args", generator, diff_seed + 7919, i)
             for i in range(diff_cases)]
    _fail_if_any(f"complex {name}", diff_device, diff_seed, cases)


@pytest.mark.parametrize("name,generator", LINALG_PLAN, ids=[name for name, _ in LINALG_PLAN])
def test_complex_linalg_matches_torch(name, generator, diff_device, diff_cases, diff_seed):
    cases = [_op_table.make_case(name, ["function"], "args", generator, diff_seed + 7919, i, owner="T.linalg")
             for i in range(diff_cases)]
    _fail_if_any(f"complex linalg.{name}", diff_device, diff_seed, cases)


@pytest.mark.parametrize("name,generator", FFT_PLAN, ids=[name for name, _ in FFT_PLAN])
def test_fft_matches_torch(name, generator, diff_device, diff_cases, diff_seed):
    cases = [_op_table.make_case(name, ["function"], "args", generator, diff_seed, i, owner="T.fft")
             for i in range(diff_cases)]
    _fail_if_any(f"fft.{name}", diff_device, diff_seed, cases)


def test_every_fft_function_is_covered():
    import torch.fft
    public = {n for n in dir(torch.fft) if not n.startswith("_") and callable(getattr(torch.fft, n))
              and n != "Tensor"}
    assert public == set(_specs_complex.FFT)


@pytest.mark.parametrize("name,generator", WINDOW_PLAN, ids=[name for name, _ in WINDOW_PLAN])
def test_signal_window_matches_torch(name, generator, diff_device, diff_cases, diff_seed):
    cases = [_op_table.make_case(name, ["function"], "args", generator, diff_seed, i, owner="T.signal.windows")
             for i in range(diff_cases)]
    _fail_if_any(f"signal.windows.{name}", diff_device, diff_seed, cases)


def test_every_signal_window_is_covered():
    from torch.signal import windows
    assert set(windows.__all__) == set(_specs_complex.SIGNAL_WINDOWS)
