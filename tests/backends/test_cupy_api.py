"""The CuPy API that gputorch uses exists, with those keywords, in the real CuPy and in the simulated one.

The uses are read from gputorch's sources: every attribute chain on ``xp`` / ``cp`` / ``cupy`` (the
array module of the backend in use, which is CuPy on a GPU) and, for calls, the keywords and number
of positional arguments passed. The tests against the installed ``cupy`` package (which imports
without a GPU) skip where it is absent; those against the simulated CuPy always run.
"""
import ast
import inspect
import sys
from pathlib import Path

import pytest

import gputorch
from gputorch.backends import simulated_cupy, simulated_cupy_api
from gputorch.backends.simulated_cupy_apigen import _doc_signature, _function_spec, collect

ROOT = Path(gputorch.__file__).resolve().parent
MODULE_NAMES = {"xp", "cp", "cupy"}
# Backends and tools that never see CuPy: their `xp` is NumPy or the meta module.
NOT_CUDA = ("backends/meta", "backends/cpu.py", "backends/numpy_engine.py", "backends/simulated_cupy",
            "cuda/harness/")


def _chain(node):
    """``["linalg", "solve"]`` for ``xp.linalg.solve``; None when the root is not an array module."""
    parts = []
    while isinstance(node, ast.Attribute):
        if node.attr in ("xp", "_cupy") and parts:   # backend.xp.exp, self._cupy.ndarray, _require().xp...
            return parts[::-1]
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in MODULE_NAMES and parts:
        return parts[::-1]
    return None


def collect_uses():
    """``{dotted name: [(file:line, n positional or None, keywords)]}`` over gputorch's sources."""
    uses = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if any(rel.startswith(p) for p in NOT_CUDA):
            continue
        tree = ast.parse(path.read_text(), str(path))
        called = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                chain = _chain(node.func)
                if chain:
                    starred = any(isinstance(a, ast.Starred) for a in node.args)
                    keywords = tuple(k.arg for k in node.keywords if k.arg is not None)
                    uses.setdefault(".".join(chain), []).append(
                        (f"{rel}:{node.lineno}", None if starred else len(node.args), keywords))
                    called.add(id(node.func))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and id(node) not in called:
                chain = _chain(node)
                if chain and not (isinstance(getattr(node, "ctx", None), ast.Store)):
                    uses.setdefault(".".join(chain), []).append((f"{rel}:{node.lineno}", None, ()))
    # an attribute chain's prefixes (xp.cuda for xp.cuda.Device) are uses of their own
    return uses


USES = collect_uses()


def test_the_scan_finds_the_cuda_backend_uses():
    """The source scan itself: it sees the uses that the CUDA backend is known to make."""
    for name in ("asarray", "cuda.Device", "cuda.runtime.getDevice", "RawModule", "einsum", "linalg.solve",
                 "lib.stride_tricks.as_strided", "add.at", "from_dlpack", "cuda.runtime.getDeviceProperties"):
        assert name in USES, name
    raw = USES["RawModule"]
    assert any(set(k) == {"code", "options", "name_expressions"} for _, _, k in raw)
    assert any("optimize" in k for _, _, k in USES["einsum"])


def _resolve(module, dotted):
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _call_problem(obj, npos, keywords, ufunc_type):
    """Why a call ``obj(<npos positional>, **keywords)`` does not fit CuPy's signature, or None."""
    if isinstance(obj, ufunc_type):
        spec = _doc_signature(obj)
        if spec is not None:
            accepted = {p.split(":", 1)[1] for p in spec if p[0] in "ak" and "=" in p}
            wrong = set(keywords) - accepted
            if wrong:
                return f"keywords {sorted(wrong)} not in {sorted(accepted)}"
        if npos is not None and not obj.nin <= npos <= obj.nin + obj.nout:
            return f"{npos} positional arguments for a ufunc of {obj.nin} inputs"
        return None
    if isinstance(obj, type):
        return None  # constructors (dtypes, Device, Stream ...): checked one by one below
    spec = _function_spec(obj)
    if spec is None:
        return None
    params = []
    for p in spec:
        code, name = p.split(":", 1)
        kind = {"p": inspect.Parameter.POSITIONAL_ONLY, "a": inspect.Parameter.POSITIONAL_OR_KEYWORD,
                "v": inspect.Parameter.VAR_POSITIONAL, "k": inspect.Parameter.KEYWORD_ONLY,
                "w": inspect.Parameter.VAR_KEYWORD}[code[0]]
        params.append(inspect.Parameter(name, kind, default=None if "=" in code else inspect.Parameter.empty))
    sig = inspect.Signature(params)
    try:
        if npos is None:  # *args at the call: check the keywords only
            sig.bind_partial(**{k: None for k in keywords})
        else:
            sig.bind(*[None] * npos, **{k: None for k in keywords})
    except TypeError as e:
        return f"{e} (signature {sig})"
    return None


@pytest.fixture(scope="module")
def cupy():
    return pytest.importorskip("cupy")


def test_every_used_name_exists_in_cupy(cupy):
    missing = []
    for name, sites in sorted(USES.items()):
        try:
            _resolve(cupy, name)
        except AttributeError:
            missing.append(f"cupy.{name} (used at {sites[0][0]})")
    assert not missing, "gputorch uses names CuPy does not have:\n" + "\n".join(missing)


def test_every_call_fits_cupys_signature(cupy):
    ufunc_type = type(cupy.add)
    wrong = []
    checked = 0
    for name, sites in sorted(USES.items()):
        try:
            obj = _resolve(cupy, name)
        except AttributeError:
            continue
        for where, npos, keywords in sites:
            if npos is None and not keywords:
                continue
            checked += 1
            problem = _call_problem(obj, npos, keywords, ufunc_type)
            if problem:
                wrong.append(f"cupy.{name} at {where}: {problem}")
    assert checked > 100, checked
    assert not wrong, "calls that CuPy would reject:\n" + "\n".join(wrong)


def test_raw_kernel_api_used_by_the_kernels(cupy):
    """``_module.py`` compiles with ``RawModule(code=, options=, name_expressions=)``, gets kernels with
    ``get_function`` and launches ``kernel(grid, block, args, shared_mem=...)``; the wrappers raise the
    dynamic shared memory limit through ``max_dynamic_shared_size_bytes``."""
    doc = cupy.RawModule.__doc__ or ""
    for keyword in ("code", "options", "name_expressions"):
        assert keyword in doc.split("\n\n")[0] or f"{keyword}" in doc, keyword
    assert hasattr(cupy.RawModule, "get_function")
    assert "shared_mem" in (cupy.RawKernel.__call__.__doc__ or "")
    assert isinstance(getattr(cupy.RawKernel, "max_dynamic_shared_size_bytes"), property) or hasattr(
        cupy.RawKernel, "max_dynamic_shared_size_bytes")
    for name in ("compiler.CompileException", "driver.CUDADriverError", "memory.OutOfMemoryError",
                 "runtime.CUDARuntimeError", "MemoryPointer", "Stream", "Event", "get_current_stream"):
        _resolve(cupy.cuda, name)


NDARRAY_ATTRIBUTES = ("shape", "dtype", "strides", "ndim", "size", "T", "flags", "data", "device", "astype",
                      "reshape", "view", "copy", "get", "ravel", "fill", "item", "tolist", "sum", "max", "min",
                      "mean", "any", "all", "argmax", "transpose", "swapaxes", "squeeze", "nbytes", "itemsize",
                      "__dlpack__", "__dlpack_device__", "__cuda_array_interface__", "set", "toDlpack")


def test_ndarray_has_the_attributes_gputorch_reads(cupy):
    missing = [a for a in NDARRAY_ATTRIBUTES if not hasattr(cupy.ndarray, a)]
    assert not missing, missing


def test_committed_ndarray_list_has_the_attributes_gputorch_reads():
    """The simulated ndarray offers the names of the committed list only; those gputorch reads are in it."""
    missing = [a for a in NDARRAY_ATTRIBUTES if a not in simulated_cupy_api.NDARRAY]
    assert not missing, missing
    for a in NDARRAY_ATTRIBUTES:
        if a not in ("cstruct", "dumps", "toDlpack") and not hasattr(simulated_cupy.ndarray, a):
            missing.append(a)
    assert not missing, f"the simulated ndarray lacks {missing}"


def test_simulated_cupy_offers_every_used_name():
    """What gputorch uses resolves in the simulated CuPy too (so the suite reaches those calls)."""
    missing = []
    for name in sorted(USES):
        try:
            _resolve(simulated_cupy, name)
        except AttributeError as e:
            missing.append(f"{name}: {e}")
    assert not missing, missing


def test_committed_name_list_is_cupys(cupy):
    """The committed allow-list holds only names the installed CuPy has; with the same CuPy version
    the generator reproduces it exactly."""
    api = collect(cupy)
    assert set(simulated_cupy_api.NAMES) <= set(api["names"]) | set(), \
        sorted(set(simulated_cupy_api.NAMES) - set(api["names"]))
    for path, names in simulated_cupy_api.SUBMODULES.items():
        assert set(names) <= set(api["submodules"][path]), (path, sorted(set(names) - set(api["submodules"][path])))
    # The list comes from cupy-cuda12x under Python 3.11 (CI's); cupy-cuda13x adds cupy.cublas, and
    # Python 3.12 adds ndarray.__buffer__ (seen on an H200 machine).
    if api["version"] == simulated_cupy_api.VERSION and sys.version_info[:2] == (3, 11):
        assert api["names"] == simulated_cupy_api.NAMES
        assert api["submodules"] == simulated_cupy_api.SUBMODULES
        assert api["ufunc_methods"] == simulated_cupy_api.UFUNC_METHODS
        assert api["ndarray"] == simulated_cupy_api.NDARRAY
        assert api["ndarray_methods"] == simulated_cupy_api.NDARRAY_METHODS
    assert set(simulated_cupy_api.NDARRAY) <= set(dir(cupy.ndarray))


def test_generator_reads_cython_docstring_signatures():
    """What the allow-list generator makes of the signature lines of CuPy's compiled functions."""
    class Doc:
        def __init__(self, doc):
            self.__doc__ = doc
    assert _doc_signature(Doc("exp(x, /, out=None, \\*, casting='same_kind', dtype=None)\n\nElementwise exp.")) == (
        "p:x", "a=:out", "k=:casting", "k=:dtype")
    assert _doc_signature(Doc("RawKernel(str code, str name, tuple options=(), *, bool jitify=False)")) == (
        "a:code", "a:name", "a=:options", "k=:jitify")
    assert _doc_signature(Doc("ufunc.at(self, a, indices, b=None)")) == ("a:a", "a:indices", "a=:b")
    assert _doc_signature(Doc("einsum(subscripts, *operands, dtype=None, optimize=False)")) == (
        "a:subscripts", "v:operands", "k=:dtype", "k=:optimize")
    assert _doc_signature(Doc("Elementwise exponential.")) is None and _doc_signature(Doc("")) is None
    kind, spec = simulated_cupy_api.NAMES["exp"]
    assert kind == "ufunc" and spec == (1, 1, ("casting", "dtype", "out"))
    assert simulated_cupy_api.NAMES["clip"] == ("function", ("a:a", "a:a_min", "a:a_max", "a=:out"))
