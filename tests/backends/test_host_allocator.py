"""glibc's malloc thresholds set at import (array temporaries reuse memory), and the opt-out."""
import math
import os
import resource
import subprocess
import sys

import numpy as np
import pytest

import gputorch
from gputorch.backends import host_allocator

linux_glibc = pytest.mark.skipif(host_allocator._glibc() is None, reason="needs Linux with glibc")
tuned_here = pytest.mark.skipif(os.environ.get("GPUTORCH_MALLOC_TUNING") == "0",
                                reason="GPUTORCH_MALLOC_TUNING=0 in this environment")


def _run(code, **env):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, **env})
    return out.stdout.strip()


@linux_glibc
@tuned_here
def test_tuned_at_import():
    assert host_allocator.tuned()
    assert _run("import gputorch; from gputorch.backends import host_allocator as h; print(h.tuned())") == "True"


@linux_glibc
def test_environment_opt_out():
    code = "import gputorch; from gputorch.backends import host_allocator as h; print(h.tuned(), h.tune())"
    assert _run(code, GPUTORCH_MALLOC_TUNING="0") == "False False"


@linux_glibc
@tuned_here
def test_temporaries_reuse_memory():
    """The GELU of a (8, 64, 256) float32 tensor, repeated: without the thresholds glibc faults in
    about 450 fresh pages a call for its 0.5 MiB temporaries; with them, none after warm-up."""
    x = gputorch.randn(8, 64, 256)
    rounds = []
    for _ in range(4):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(10):
            y = gputorch.nn.functional.gelu(x * 0.5)
        rounds.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    assert min(rounds[1:]) < 50, rounds
    h = x.numpy().astype(np.float64) * 0.5
    expected = h * 0.5 * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-6)
