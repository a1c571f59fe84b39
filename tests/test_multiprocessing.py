"""gputorch.multiprocessing: Python's multiprocessing with PyTorch's ``spawn`` (each process runs
``fn(index, *args)``; a failure in one is raised in the parent with its traceback)."""
import pytest

import gputorch
import gputorch.multiprocessing as mp


def _write_square(index, folder):
    import gputorch as torch
    value = torch.tensor(float(index)) ** 2
    (folder / f"{index}.txt").write_text(str(value.item()))


def _fail_on_one(index):
    if index == 1:
        raise ValueError("process one fails")


def test_spawn_runs_every_index(tmp_path):
    assert mp.spawn(_write_square, args=(tmp_path,), nprocs=3) is None
    assert sorted(p.read_text() for p in tmp_path.iterdir()) == ["0.0", "1.0", "4.0"]


def test_a_failing_process_is_raised_with_its_traceback():
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: process one fails"):
        mp.spawn(_fail_on_one, nprocs=2)


def test_names_and_sharing_strategy():
    assert gputorch.multiprocessing is mp
    assert mp.get_context("spawn").Process is not None and mp.cpu_count() >= 1
    assert mp.get_sharing_strategy() == "file_system"
    with pytest.raises(ValueError, match="unknown sharing strategy"):
        mp.set_sharing_strategy("telepathy")
