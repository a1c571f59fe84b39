"""The subprocess side of a sanitized launch (see ``sanitizer.py``): standard library only.

Run as a script, with the sanitizer runtime preloaded: it loads the sanitized kernel
module, copies the arrays into fresh buffers, launches, and writes the arrays back. It
imports neither NumPy nor gputorch (both are slow to start under ThreadSanitizer); the
parent has already checked and marshalled the arguments.
"""
import ctypes
import os
import pickle
import sys


class LaunchConfig(ctypes.Structure):  # harness::LaunchConfig
    _fields_ = [("grid", ctypes.c_uint32 * 3), ("block", ctypes.c_uint32 * 3), ("shared_mem", ctypes.c_uint64),
                ("blocks", ctypes.c_void_p), ("nblocks", ctypes.c_uint64), ("stack_size", ctypes.c_uint64),
                ("timeout_s", ctypes.c_double)]


def main(job_path, result_path):
    with open(job_path, "rb") as f:
        job = pickle.load(f)
    lib = ctypes.CDLL(job["so"], mode=os.RTLD_LOCAL)
    lib.harness_launch_kernel.restype = ctypes.c_int
    lib.harness_launch_kernel.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(LaunchConfig),
                                          ctypes.c_char_p, ctypes.c_ulonglong]
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    keep, arrays = [], []
    ptrs = (ctypes.c_void_p * max(len(job["args"]), 1))()
    for k, (kind, value) in enumerate(job["args"]):
        if kind == "array":
            # malloc'ed with exactly the array's size, so that AddressSanitizer sees every overrun
            addr = libc.malloc(len(value))
            ctypes.memmove(addr, value, len(value))
            arrays.append((addr, len(value)))
            slot = ctypes.c_uint64(addr)
        elif kind == "pointer":
            slot = ctypes.c_uint64(value)
        else:
            slot = ctypes.create_string_buffer(value, max(len(value), 16))
        keep.append(slot)
        ptrs[k] = ctypes.addressof(slot)
    cfg = LaunchConfig()
    cfg.grid[:] = job["grid"]
    cfg.block[:] = job["block"]
    cfg.shared_mem = job["shared_mem"]
    if job["blocks"] is not None:
        blocks = (ctypes.c_uint64 * len(job["blocks"]))(*job["blocks"])
        cfg.blocks = ctypes.addressof(blocks)
        cfg.nblocks = len(job["blocks"])
    cfg.timeout_s = job["timeout"]
    err = ctypes.create_string_buffer(4096)
    rc = lib.harness_launch_kernel(job["index"], ptrs, ctypes.byref(cfg), err, len(err))
    result = {"rc": rc, "error": err.value.decode(errors="replace"),
              "arrays": [ctypes.string_at(addr, size) for addr, size in arrays]}
    with open(result_path, "wb") as f:
        pickle.dump(result, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
