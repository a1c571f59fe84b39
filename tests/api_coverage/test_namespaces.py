"""Coverage of PyTorch's public API: every public name of torch's main namespaces exists in
gputorch's, is excluded by a family rule with a reason (``exclusions.py``), or is listed as pending
(``pending.txt``, with the issue that covers it). A name that goes missing fails here, and so does a
pending name that now exists (so the list shrinks as the work lands). The names are those of torch
2.13 (the reference this project tests against); with another torch installed the test skips.
"""
import pathlib

import pytest

import gputorch
from tests.api_coverage import exclusions

torch = pytest.importorskip("torch")
if torch.__version__.split("+")[0] != "2.13.0":
    pytest.skip("the pending list is written against torch 2.13.0's namespaces", allow_module_level=True)

PENDING_FILE = pathlib.Path(__file__).with_name("pending.txt")


def _namespaces():
    import torch.nn.functional
    import torch.utils.data
    return {
        "torch": (torch, gputorch), "torch.Tensor": (torch.Tensor, gputorch.Tensor),
        "torch.nn": (torch.nn, gputorch.nn), "torch.nn.functional": (torch.nn.functional, gputorch.nn.functional),
        "torch.linalg": (torch.linalg, gputorch.linalg), "torch.special": (torch.special, gputorch.special),
        "torch.fft": (torch.fft, getattr(gputorch, "fft", None)), "torch.optim": (torch.optim, gputorch.optim),
        "torch.utils.data": (torch.utils.data, gputorch.utils.data),
    }


def missing_names(namespace, theirs, ours):
    """Public names of ``theirs`` that ``ours`` lacks and no exclusion family covers."""
    names = (n for n in dir(theirs) if not n.startswith("_"))
    return {n for n in names if (ours is None or not hasattr(ours, n)) and exclusions.reason(namespace, n) is None}


def read_pending():
    """``{namespace: {name: issue}}`` from pending.txt (``namespace name  # issue N`` lines)."""
    pending = {}
    for line in PENDING_FILE.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        entry, _, note = line.partition("#")
        namespace, name = entry.split()
        pending.setdefault(namespace, {})[name] = note.strip()
    return pending


@pytest.mark.parametrize("namespace", sorted(_namespaces()))
def test_every_public_name_exists_is_excluded_or_pending(namespace):
    theirs, ours = _namespaces()[namespace]
    missing = missing_names(namespace, theirs, ours)
    pending = set(read_pending().get(namespace, {}))
    assert not missing - pending, (f"{namespace}: public names missing from gputorch, neither excluded nor "
                                   f"pending: {sorted(missing - pending)}")
    assert not pending - missing, (f"{namespace}: names listed as pending that gputorch now has (or that "
                                   f"an exclusion covers): remove them from pending.txt: "
                                   f"{sorted(pending - missing)}")


def test_every_pending_name_names_its_issue():
    for namespace, names in read_pending().items():
        for name, note in names.items():
            assert note.startswith("issue "), f"{namespace} {name}: say which issue covers it ('# issue N ...')"
