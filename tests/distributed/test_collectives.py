"""gputorch.distributed's collectives on real MPI processes, checked against NumPy by the workers
(on the CPU, and on simulated GPUs in the simulated pass, through host staging)."""
import pytest

from tests.distributed._launch import assert_all_passed, run_workers


@pytest.mark.parametrize("n", [2, 3])
def test_every_collective_matches_numpy(n):
    assert_all_passed(run_workers("collectives.py", n=n), n)


def test_a_rank_that_leaves_is_named_within_the_timeout():
    proc = run_workers("stalls.py", "early_exit", timeout=60)
    assert_all_passed(proc)


def test_ranks_in_different_collectives_are_named():
    assert_all_passed(run_workers("stalls.py", "skipped_collective", timeout=60))


def test_detail_debug_level_names_mismatched_shapes():
    assert_all_passed(run_workers("stalls.py", "detail_mismatch", timeout=60))
