"""Build hook: ship the top-level ``kernels/`` directory inside the package.

All metadata lives in pyproject.toml. The only thing pyproject.toml cannot say is
"these Python packages, found automatically, plus one data directory mapped from
elsewhere": the CUDA sources live in ``kernels/`` at the repository top level
(the CUDA backend loads them), and an installed gputorch finds them at
``gputorch/_kernels/``. In a source checkout or an editable install they are read
from ``kernels/`` directly (see kernels/README.md for the lookup rule).
"""
from setuptools import find_packages, setup

KERNEL_FILES = ["*.cu", "*.cuh", "*.h", "*.hpp"]

setup(
    packages=find_packages(include=["gputorch", "gputorch.*"]) + ["gputorch._kernels"],
    package_dir={"gputorch._kernels": "kernels"},
    # The CPU execution harness (gputorch/cuda/harness) compiles kernels against its headers.
    package_data={"gputorch._kernels": KERNEL_FILES, "gputorch.cuda.harness": ["*.h"]},
    include_package_data=False,
)
