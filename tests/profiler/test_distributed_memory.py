"""The memory profiler under DistributedDataParallel on 2 MPI processes (see
tests/distributed/workers/profiled_ddp.py): bucket memory is its own category, collectives are marks."""
import pytest

from tests.distributed._launch import assert_all_passed, backends, run_workers


@pytest.mark.parametrize("backend", backends())
def test_bucket_memory_and_communication_marks(backend):
    assert_all_passed(run_workers("profiled_ddp.py", backend, timeout=180))
