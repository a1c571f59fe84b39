"""Running a group of cases, collecting disagreements, and the run-wide tally.

:func:`run_cases` runs every case of one op (or op family) on torch (CPU)
and gputorch (the device under test) and returns the disagreements; the
test then fails once with all of them, each with its seed, case index and a
one-line repro. :data:`TALLY` counts cases per group for the summary that
``conftest.py`` prints at the end of the session (and, when the environment
variable ``GPUTORCH_DIFF_REPORT`` names a file, writes as JSON).
"""
import json
import os
import re
from collections import Counter, defaultdict

from ._known import known_reason
from ._runner import CaseGeneratorError, compare, execute, looseness_for

TALLY = defaultdict(lambda: {"cases": 0, "disagree": 0, "known": 0, "torch_bugs": 0, "problems": [],
                             "known_problems": []})


def _torch_internal_error(outcome):
    """Whether torch hit one of its own internal asserts: nothing for gputorch to match."""
    return any(exc is not None and "INTERNAL ASSERT FAILED" in str(exc)
               for exc in (outcome.error, outcome.backward_error))

def _source(case):
    """The case's body and leaves as text, for ``_known``'s case patterns."""
    return " ".join([case.body] + list(case.leaves))


_SHOWN_PER_GROUP = 50


def run_cases(group, cases, torch, gputorch, device, seed):
    """Run ``cases``; return ``[(case, problems, repro)]`` for the disagreeing ones."""
    failures, known, torch_bugs = [], [], 0
    for case in cases:
        weight_seed = hash((seed, case.index)) & 0xFFFF_FFFF
        try:
            ref = execute(case, torch, "cpu", weight_seed)
        except CaseGeneratorError as exc:
            failures.append((case, [f"case generator error: {exc}"], case.repro(device)))
            continue
        if _torch_internal_error(ref):
            torch_bugs += 1
            continue
        got = execute(case, gputorch, device, weight_seed)
        problems = compare(ref, got, looseness_for(group))
        if problems:
            with_grad = any(p.startswith(("backward", "grad of")) for p in problems)
            found = (case, problems, case.repro(device, with_grad, ref.tensor_output))
            (known if known_reason(group, problems, device, _source(case)) else failures).append(found)
    entry = TALLY[f"{group}[{device}]"]
    entry["cases"] += len(cases) - torch_bugs
    entry["torch_bugs"] += torch_bugs
    entry["disagree"] += len(failures)
    entry["known"] += len(known)
    entry["problems"] += [{"index": c.index, "problems": p, "repro": r} for c, p, r in failures]
    entry["known_problems"] += [{"index": c.index, "problems": p, "repro": r,
                                 "reason": known_reason(group, p, device, _source(c))} for c, p, r in known]
    return failures


def failure_message(group, device, seed, total, failures):
    """The text a failing group test prints: counts, then each case with its repro."""
    lines = [f"{group} on {device}: {len(failures)}/{total} cases disagree with torch "
             f"(seed {seed}; rerun with GPUTORCH_DIFF_SEED={seed})"]
    for case, problems, repro in failures[:_SHOWN_PER_GROUP]:
        lines.append(f"- case {case.index}: {case.body}")
        lines += [f"    {p}" for p in problems[:3]]
        lines.append(f"    repro: {repro}")
    if len(failures) > _SHOWN_PER_GROUP:
        lines.append(f"... and {len(failures) - _SHOWN_PER_GROUP} more (GPUTORCH_DIFF_REPORT=file.json lists all)")
    return "\n".join(lines)


def summary_lines():
    cases = sum(e["cases"] for e in TALLY.values())
    if not cases:
        return []
    disagree = sum(e["disagree"] for e in TALLY.values())
    known = sum(e["known"] for e in TALLY.values())
    groups = sum(1 for e in TALLY.values() if e["disagree"])
    torch_bugs = sum(e["torch_bugs"] for e in TALLY.values())
    agree = cases - disagree - known
    lines = [f"differential: {cases} cases in {len(TALLY)} groups, {agree} agree ({100.0 * agree / cases:.2f}%), "
             f"{known} known disagreements (_known.py), {disagree} new disagreements in {groups} groups"
             + (f"; {torch_bugs} cases not counted (torch internal assert)" if torch_bugs else "")]
    by_reason = Counter(p["reason"] for e in TALLY.values() for p in e["known_problems"])
    lines += [f"  known: {n:4d} cases: {reason}" for reason, n in by_reason.most_common()]
    if disagree:
        lines += ["most frequent disagreement families (first problem of each case):"] + family_lines()
    return lines


_DTYPE_WORDS = (r"\b(Bool|Byte|Char|Short|Int|Long|Half|Float|Double|"
                r"bool|uint8|int8|int16|int32|int64|float16|float32|float64)\b")


def family_key(problem):
    """A disagreement with its numbers, shapes and dtypes blanked out, to group alike cases."""
    key = re.sub(r"^(out|input \d+ after the call|grad of leaf \d+)(\[\d+\])*: ", r"\1: ", problem)
    key = re.sub(r"values differ at .*", "values differ", key)
    key = re.sub(_DTYPE_WORDS, "D", key)
    key = re.sub(r"-?\d+(\.\d+)?(e[+-]?\d+)?", "N", key)
    key = re.sub(r"\[[N, ]*\]|\([N, ]*\)", "S", key)
    return key[:170]


def family_lines(limit=25):
    """The most frequent disagreement families: cases, groups, and a few group names."""
    cases, groups = Counter(), defaultdict(set)
    for group, entry in TALLY.items():
        for failure in entry["problems"]:
            key = family_key(failure["problems"][0])
            cases[key] += 1
            groups[key].add(group.split("[")[0])
    lines = []
    for key, count in cases.most_common(limit):
        names = sorted(groups[key])
        lines.append(f"  {count:4d} cases, {len(names):3d} groups: {key}   [{', '.join(names[:6])}"
                     f"{', ...' if len(names) > 6 else ''}]")
    return lines


def write_json_report():
    path = os.environ.get("GPUTORCH_DIFF_REPORT")
    if path and TALLY:
        with open(path, "w") as handle:
            json.dump(TALLY, handle, indent=1)
