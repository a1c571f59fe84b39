"""gputorch.distributed's collectives on real MPI processes, checked against NumPy by the workers
(on the CPU; on simulated GPUs in the simulated pass, through host memory with "mpi" and through the
simulated NCCL with "nccl")."""
import pytest

from tests.distributed._launch import assert_all_passed, backends, run_workers


@pytest.mark.parametrize("backend", backends())
def test_every_collective_matches_numpy(backend):
    assert_all_passed(run_workers("collectives.py", backend, n=2))


def test_nccl_group_without_nccl_goes_through_host_memory():
    assert_all_passed(run_workers("collectives.py", "nccl-absent", n=2))


def test_three_processes_and_a_subgroup():
    assert_all_passed(run_workers("collectives.py", "mpi", n=3), 3)


@pytest.mark.parametrize("backend", backends())
@pytest.mark.parametrize("scenario", ["early_exit", "skipped_collective", "detail_mismatch"])
def test_stalls_and_mismatches_are_named_within_the_timeout(scenario, backend):
    """A rank that leaves, ranks in different collectives, mismatched shapes at DETAIL level: each
    raises an error naming the ranks (see workers/stalls.py), never a hang."""
    assert_all_passed(run_workers("stalls.py", scenario, backend, timeout=60))
