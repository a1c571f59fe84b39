"""``nn.functional`` and ``nn`` modules must behave like torch's.

One test per function and per module class (and device): seeded cases with
defaults and documented options at random sizes, forward and backward, the
module parameters copied from the same seeded draw on both sides. Random
behaviour is excluded by construction (dropout with ``p=0`` or
``training=False``, modules in eval mode unless the case says ``train``).
"""
import pytest

torch = pytest.importorskip("torch")

import gputorch  # noqa: E402

from tests.differential import _nn_functional_specs, _nn_table, _op_table, _report  # noqa: E402

FUNCTIONAL_PLAN, FUNCTIONAL_NOT_COVERED = _nn_table.functional_plan(torch)
MODULE_PLAN, MODULES_NOT_COVERED = _nn_table.module_plan(torch)


def _fail_if_any(group, device, seed, cases):
    failures = _report.run_cases(group, cases, torch, gputorch, device, seed)
    if failures:
        pytest.fail(_report.failure_message(group, device, seed, len(cases), failures), pytrace=False)


@pytest.mark.parametrize("name,generator", FUNCTIONAL_PLAN, ids=[entry[0] for entry in FUNCTIONAL_PLAN])
def test_functional_matches_torch(name, generator, diff_device, diff_nn_cases, diff_seed):
    cases = [_op_table.make_case(name, ["function"], "args", generator, diff_seed, i, owner="T.nn.functional")
             for i in range(diff_nn_cases)]
    _fail_if_any(f"F.{name}", diff_device, diff_seed, cases)


@pytest.mark.parametrize("name,body", MODULE_PLAN, ids=[entry[0] for entry in MODULE_PLAN])
def test_module_matches_torch(name, body, diff_device, diff_nn_cases, diff_seed):
    cases = [_nn_table.make_module_case(name, body, diff_seed, i) for i in range(diff_nn_cases)]
    _fail_if_any(f"nn.{name}", diff_device, diff_seed, cases)


def test_every_functional_and_module_is_covered_or_listed():
    unlisted = sorted(set(FUNCTIONAL_NOT_COVERED) - set(_nn_functional_specs.FUNCTIONAL_NOT_COVERED))
    assert not unlisted, f"nn.functional names with no generator and not listed: {unlisted}"
    unlisted = sorted(set(MODULES_NOT_COVERED) - set(_nn_table.MODULES_NOT_COVERED))
    assert not unlisted, f"nn modules with no generator and not listed: {unlisted}"


def test_required_functional_and_modules_are_covered():
    """The functions and modules issue 14 names explicitly are all in the plans."""
    functions = {name for name, _ in FUNCTIONAL_PLAN}
    required = {"linear", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool2d", "avg_pool2d",
                "adaptive_avg_pool2d", "adaptive_max_pool2d", "batch_norm", "layer_norm", "group_norm", "embedding",
                "dropout", "softmax", "log_softmax", "scaled_dot_product_attention", "interpolate", "pad",
                "mse_loss", "cross_entropy", "nll_loss", "binary_cross_entropy", "relu", "gelu"}
    assert required <= functions, sorted(required - functions)
    modules = {name for name, _ in MODULE_PLAN}
    required = {"Linear", "Conv2d", "LSTM", "GRU", "MultiheadAttention", "TransformerEncoderLayer"}
    assert required <= modules, sorted(required - modules)


def test_harness_agrees_torch_with_itself(diff_seed):
    """Sanity check of the harness: torch against torch agrees on the first case of each group."""
    from tests.differential._runner import compare, execute
    cases = [_op_table.make_case(name, ["function"], "args", generator, diff_seed, 0, owner="T.nn.functional")
             for name, generator in FUNCTIONAL_PLAN]
    cases += [_nn_table.make_module_case(name, body, diff_seed, 0) for name, body in MODULE_PLAN]
    problems = []
    for case in cases:
        found = compare(execute(case, torch, "cpu", 0), execute(case, torch, "cpu", 0))
        if found:
            problems.append(f"{case.op}: {found[0]}\n  {case.repro('cpu')}")
    assert not problems, "\n".join(problems[:20])
