"""CPU execution harness for CUDA kernels (test support; no GPU needed).

Compiles unchanged CUDA C kernel sources with g++ (C++20) against a header of CUDA
built-ins and runs launches on the CPU. See the module docstrings of ``launcher`` and
``compiler`` for the details.
"""
from .compiler import CompileError, HarnessError, toolchain_problem
from .launcher import LaunchError, RawKernel, RawModule

__all__ = ["RawModule", "RawKernel", "HarnessError", "CompileError", "LaunchError", "toolchain_problem"]
