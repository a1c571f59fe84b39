"""Every op in gputorch's op table, called like torch, must behave like torch.

One test per op name (and device): it draws ``--diff-cases`` seeded cases
(see ``conftest.py``), runs each on torch (CPU) and gputorch, and fails once
listing every disagreeing case with a one-line repro. A separate test checks
that each op-table name torch also has is either covered here or listed in
``_op_specs.NOT_COVERED`` with a reason.
"""
import pytest

torch = pytest.importorskip("torch")

import gputorch  # noqa: E402

from tests.differential import _known, _op_specs, _op_table, _report  # noqa: E402

PLAN, NOT_COVERED = _op_table.build_plan(torch)


@pytest.mark.parametrize("name,forms,kind,generator", PLAN, ids=[entry[0] for entry in PLAN])
def test_op_matches_torch(name, forms, kind, generator, diff_device, diff_cases, diff_seed):
    count = diff_cases * _op_specs.CASE_WEIGHT.get(name, 1)
    cases = [_op_table.make_case(name, forms, kind, generator, diff_seed, i) for i in range(count)]
    failures = _report.run_cases(name, cases, torch, gputorch, diff_device, diff_seed)
    if failures:
        pytest.fail(_report.failure_message(name, diff_device, diff_seed, len(cases), failures),
                    pytrace=False)


def test_every_op_table_name_is_covered_or_listed():
    """An op added to the table is covered (explicitly or by probing) or listed with a reason."""
    table = _op_table.op_table(torch)
    covered = {entry[0] for entry in PLAN}
    unaccounted = sorted(set(table) - covered - set(_op_specs.NOT_COVERED))
    assert not unaccounted, f"op-table names neither covered nor listed in NOT_COVERED: {unaccounted}"
    silently_skipped = sorted(set(NOT_COVERED) - set(_op_specs.NOT_COVERED))
    assert not silently_skipped, (
        "torch accepts neither one nor two tensors for these ops; give them a signature in "
        f"_op_specs.EXPLICIT or list them in NOT_COVERED: {silently_skipped}")


def test_not_covered_list_is_short_and_current():
    """The NOT_COVERED list names only real op-table names and stays short."""
    table_names = set(_op_table.op_table(torch))
    public = {n for n in dir(gputorch) if not n.startswith("_")}
    stale = sorted(n for n in _op_specs.NOT_COVERED if n not in table_names and n not in public)
    assert not stale, f"NOT_COVERED lists names gputorch no longer has: {stale}"
    assert len(_op_specs.NOT_COVERED) <= 40


def test_harness_agrees_torch_with_itself(diff_seed):
    """Sanity check of the harness: torch against torch agrees on every op's first cases.

    A failure here is a bug in the generators or the comparison (nondeterministic
    inputs, a tolerance that cannot pass, a repro that does not rebuild the case),
    not in gputorch.
    """
    from tests.differential._runner import compare, execute
    problems = []
    for name, forms, kind, generator in PLAN:
        for index in range(2):
            case = _op_table.make_case(name, forms, kind, generator, diff_seed, index)
            if case.random:
                continue
            first = execute(case, torch, "cpu", index)
            second = execute(case, torch, "cpu", index)
            found = compare(first, second)
            if found and not _known.torch_nondeterministic(name, found, " ".join([case.body] + case.leaves)):
                problems.append(f"{name} case {index}: {'; '.join(found)}\n  {case.repro('cpu')}")
    assert not problems, "\n".join(problems[:20])
