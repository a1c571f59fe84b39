"""Generates ``simulated_cupy_api.py``: the names (and call signatures) of the installed CuPy.

The simulated CuPy exposes only what this list holds, so code that calls a NumPy function CuPy
lacks, or passes a keyword CuPy does not take, fails in the tests as it would on a GPU.

Regenerate after upgrading CuPy (it imports without a GPU)::

    python -m gputorch.backends.simulated_cupy_apigen

Each entry maps a public name to ``(kind, spec)``:

* ``"ufunc"``: spec is ``(nin, nout, keywords)``, the keywords the ufunc's call accepts (None
  when its docstring shows no signature);
* ``"function"``: spec is a tuple of parameters, each ``"<kind><default>:<name>"`` with kind
  ``p`` (positional only), ``a`` (positional or keyword), ``v`` (``*args``), ``k`` (keyword
  only), ``w`` (``**kwargs``) and ``=`` when it has a default; ``None`` when CuPy's function
  carries no readable signature (then the call is not checked);
* ``"class"``, ``"module"``, ``"value"``: spec is None.
"""
import ast
import inspect
import pprint
import re
import sys
from pathlib import Path

SUBMODULES = ("linalg", "fft", "random", "lib.stride_tricks")
UFUNC_METHODS = ("at", "reduce", "accumulate", "reduceat", "outer")
_KIND_CODES = {inspect.Parameter.POSITIONAL_ONLY: "p", inspect.Parameter.POSITIONAL_OR_KEYWORD: "a",
               inspect.Parameter.VAR_POSITIONAL: "v", inspect.Parameter.KEYWORD_ONLY: "k",
               inspect.Parameter.VAR_KEYWORD: "w"}


def _spec_of_signature(sig, drop_self=False):
    params = list(sig.parameters.values())
    if drop_self and params and params[0].name == "self":
        params = params[1:]
    return tuple(f"{_KIND_CODES[p.kind]}{'=' if p.default is not p.empty else ''}:{p.name}" for p in params)


def _doc_signature(obj):
    """The signature in the first line of a Cython function's docstring (``name(a, b=None, \\*, c=1)``)."""
    doc = (getattr(obj, "__doc__", None) or "").strip()
    match = re.match(r"[\w.]+\((.*)\)", doc.splitlines()[0] if doc else "")
    if not match:
        return None
    text = match.group(1).replace("\\*", "*")
    # Cython spellings such as "str code" or "tuple options=()" keep only the parameter name.
    text = re.sub(r"\b(?:str|int|bool|tuple|float|object|dict|list)\s+(?=[A-Za-z_])", "", text)
    try:
        tree = ast.parse(f"def f({text}): pass")
    except SyntaxError:
        return None
    args = tree.body[0].args
    out = []
    n_posonly, positional = len(args.posonlyargs), args.posonlyargs + args.args
    n_defaults = len(args.defaults)
    for i, a in enumerate(positional):
        has_default = i >= len(positional) - n_defaults
        kind = "p" if i < n_posonly else "a"
        out.append(f"{kind}{'=' if has_default else ''}:{a.arg}")
    if args.vararg:
        out.append(f"v:{args.vararg.arg}")
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append(f"k{'=' if d is not None else ''}:{a.arg}")
    if args.kwarg:
        out.append(f"w:{args.kwarg.arg}")
    if out and out[0].endswith(":self"):
        out = out[1:]
    return tuple(out)


def _function_spec(obj):
    try:
        return _spec_of_signature(inspect.signature(obj))
    except (TypeError, ValueError):
        return _doc_signature(obj)


def _ufunc_spec(u):
    spec = _doc_signature(u)
    if spec is None:  # no readable signature (two-output ufuncs): keywords are not checked
        return (u.nin, u.nout, None)
    keywords = tuple(sorted(p.split(":", 1)[1] for p in spec if p[0] in "ak" and "=" in p))
    return (u.nin, u.nout, keywords)


def describe(obj, ufunc_type):
    """``(kind, spec)`` for one public CuPy object."""
    if isinstance(obj, ufunc_type):
        return "ufunc", _ufunc_spec(obj)
    if inspect.ismodule(obj):
        return "module", None
    if isinstance(obj, type):
        return "class", None
    if callable(obj):
        return "function", _function_spec(obj)
    return "value", None


def _public(module):
    return sorted(n for n in dir(module) if not n.startswith("_") and n != "annotations")


def collect(cupy):
    """``{"version", "names", "submodules", "ufunc_methods"}`` read from the ``cupy`` module."""
    ufunc_type = type(cupy.add)
    names = {n: describe(getattr(cupy, n), ufunc_type) for n in _public(cupy)}
    submodules = {}
    for path in SUBMODULES:
        module = cupy
        for part in path.split("."):
            module = getattr(module, part)
        submodules[path] = {n: describe(getattr(module, n), ufunc_type) for n in _public(module)
                            if not inspect.ismodule(getattr(module, n))}
    methods = {}
    for m in UFUNC_METHODS:
        method = getattr(cupy.add, m, None)
        if method is not None:
            methods[m] = _doc_signature(method)
    ndarray = tuple(sorted(n for n in dir(cupy.ndarray) if not n.startswith("_") or (
        n.startswith("__") and n.endswith("__") and n not in _OBJECT_DUNDERS)))
    ndarray_methods = {}
    for n in ndarray:
        attr = getattr(cupy.ndarray, n)
        if not n.startswith("_") and callable(attr) and not isinstance(attr, type):
            spec = _doc_signature(attr)
            if spec is not None:
                ndarray_methods[n] = spec
    return {"version": cupy.__version__, "names": names, "submodules": submodules, "ufunc_methods": methods,
            "ndarray": ndarray, "ndarray_methods": ndarray_methods}


# Python's own machinery, which every class has: not part of what CuPy's ndarray offers.
_OBJECT_DUNDERS = frozenset(dir(object)) | {"__dict__", "__weakref__", "__module__", "__slots__", "__pyx_vtable__",
                                             "__array_finalize__", "__class_getitem__", "__dir__"}


def render(api):
    """The text of ``simulated_cupy_api.py`` for a collected API."""
    return (f'"""CuPy {api["version"]}\'s public names and call signatures, generated by '
            f'``python -m gputorch.backends.simulated_cupy_apigen``\n(see that module for the format); '
            f'do not edit by hand."""\n\n'
            f'VERSION = {api["version"]!r}\n\n'
            f'NAMES = {pprint.pformat(api["names"], width=110, compact=True)}\n\n'
            f'SUBMODULES = {pprint.pformat(api["submodules"], width=110, compact=True)}\n\n'
            f'UFUNC_METHODS = {pprint.pformat(api["ufunc_methods"], width=110, compact=True)}\n\n'
            f'# cupy.ndarray\'s attributes (public names and the protocol methods it defines)\n'
            f'NDARRAY = {pprint.pformat(api["ndarray"], width=110, compact=True)}\n\n'
            f'# the parameters of cupy.ndarray\'s methods (where their docstrings show them)\n'
            f'NDARRAY_METHODS = {pprint.pformat(api["ndarray_methods"], width=110, compact=True)}\n')


def main(argv=None):
    import cupy
    target = Path(__file__).with_name("simulated_cupy_api.py")
    target.write_text(render(collect(cupy)))
    print(f"wrote the API of CuPy {cupy.__version__} to {target}")


if __name__ == "__main__":
    main(sys.argv[1:])
