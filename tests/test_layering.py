"""Layers only look down (DESIGN.md): the array backends, the CUDA package and the ops import
nothing from nn, optim or the profiler, nor the top-level ``gputorch`` package (whose import
pulls in every layer).

Imports are read from the source with ``ast``, wherever they stand (module level or inside a
function), relative imports resolved to absolute names, and ``importlib.import_module("...")``
/ ``__import__("...")`` calls with a literal name counted as imports too.
"""
import ast
import importlib.util
import pathlib

import pytest

PACKAGE_ROOT = pathlib.Path(__file__).resolve().parent.parent / "gputorch"
LOW_LAYERS = ("backends", "cuda", "ops")
UPPER_LAYERS = ("gputorch.nn", "gputorch.optim", "gputorch.profiler")


def _module_name(path):
    parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(path):
    return path.name == "__init__.py"


def _resolve_relative(module, is_package, level, target):
    """The absolute name of ``from <level dots><target> import ...`` written in ``module``."""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[:len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _is_submodule(name):
    """Whether ``name`` is a module or package of gputorch's source tree (not an attribute)."""
    top, _, rest = name.partition(".")
    if top != PACKAGE_ROOT.name:
        return False
    where = PACKAGE_ROOT / pathlib.Path(*rest.split(".")) if rest else PACKAGE_ROOT
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def imported_names(path):
    """``[(line, absolute module name)]`` for every import in the file at ``path``."""
    return imports_in(path.read_text(), _module_name(path), _is_package(path), str(path))


def imports_in(source, module, is_package, filename="<source>"):
    """``[(line, absolute module name)]`` for every import in ``source``, the text of ``module``."""
    tree = ast.parse(source, filename=filename)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = _resolve_relative(module, is_package, node.level, node.module)
            for alias in node.names:
                # ``from .. import x``: x is a submodule (an import of it) or an attribute of base
                sub = f"{base}.{alias.name}"
                found.append((node.lineno, sub if alias.name != "*" and _is_submodule(sub) else base))
        elif isinstance(node, ast.Call) and node.args:
            fn = node.func
            called = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
            arg = node.args[0]
            if called in ("import_module", "__import__") and isinstance(arg, ast.Constant) \
                    and isinstance(arg.value, str):
                name = arg.value
                if name.startswith(".") and len(node.args) > 1:
                    pkg = node.args[1]
                    if isinstance(pkg, ast.Constant) and isinstance(pkg.value, str):
                        name = importlib.util.resolve_name(name, pkg.value)
                found.append((node.lineno, name))
    return sorted(found, key=lambda item: item[0])     # source order (``ast.walk`` is breadth-first)


def forbidden(name):
    if name == "gputorch":
        return True
    return any(name == upper or name.startswith(upper + ".") for upper in UPPER_LAYERS)


# Known violations still to fix, each with what is left to do (strict: the test fails once fixed,
# so that the entry is removed).
KNOWN = {}   # module -> why it still imports a higher layer (none now)


def low_layer_files():
    for layer in LOW_LAYERS:
        for path in sorted((PACKAGE_ROOT / layer).rglob("*.py")):
            name = str(path.relative_to(PACKAGE_ROOT))
            marks = [pytest.mark.xfail(reason=KNOWN[name], strict=True)] if name in KNOWN else []
            yield pytest.param(path, marks=marks, id=name)


def test_the_scanner_reads_every_kind_of_import():
    src = PACKAGE_ROOT / "ops" / "reduction.py"
    names = {name for _, name in imported_names(src)}
    assert "gputorch._dtype" in names            # ``from .. import _dtype``: the submodule
    assert "gputorch._dispatch" in names         # ``from .._dispatch import apply``
    assert "gputorch.autograd.node" in names
    code = ("import importlib\n"
            "def f():\n"
            "    from ...nn.functional import conv\n"
            "    from ... import nn, _tensor\n"
            "    from . import _launch\n"
            "    from ... import Tensor\n"
            "    importlib.import_module('gputorch.optim.adam')\n"
            "    importlib.import_module('..profiler', 'gputorch.ops')\n"
            "    import gputorch\n")
    names = [name for _, name in imports_in(code, "gputorch.cuda.kernels.probe", False)]
    assert names == ["importlib", "gputorch.nn.functional.conv", "gputorch.nn", "gputorch._tensor",
                     "gputorch.cuda.kernels._launch", "gputorch", "gputorch.optim.adam", "gputorch.profiler",
                     "gputorch"]
    assert [forbidden(n) for n in names] == [False, True, True, False, False, True, True, True, True]


@pytest.mark.parametrize("path", list(low_layer_files()))
def test_low_layers_do_not_import_upper_layers(path):
    bad = [f"line {line}: {name}" for line, name in imported_names(path) if forbidden(name)]
    assert not bad, f"{path.relative_to(PACKAGE_ROOT.parent)} imports upward: " + "; ".join(bad)
