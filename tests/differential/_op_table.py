"""Which ops to test and how: gputorch's op table matched against torch.

:func:`op_table` reads gputorch's op table (``gputorch.ops.registry.METHODS``
and the public functions of ``gputorch``) and keeps each name torch also has,
with the forms it can be called in (``T.name(...)``, ``x.name(...)``, the
property ``x.name``). :func:`signature_for` picks the argument generator:
the explicit table in :mod:`_op_specs`, the base op of an in-place or dunder
variant, or, for names in neither, a probe of torch (does ``torch.name(x)``
work? ``torch.name(x, y)``?). :func:`make_case` draws one seeded case.
"""
import inspect
import warnings
import zlib

import numpy as np

import gputorch
from gputorch.ops.registry import METHODS

from . import _index_specs, _op_specs, _specs_math
from ._inputs import CaseBuilder
from ._runner import Case
from ._specs_common import grad_free

# Tensor protocol methods outside the op table that users hit constantly.
PROTOCOL_BODIES = {
    "__int__": "int({x})", "__float__": "float({x})", "__bool__": "bool({x})", "__len__": "len({x})",
    "__index__": "{x}.__index__()", "item": "{x}.item()", "tolist": "{x}.tolist()",
    "__iter__": "list({x})", "numel": "{x}.numel()", "dim": "{x}.dim()", "size": "{x}.size()",
    "is_contiguous": "{x}.is_contiguous()", "stride": "{x}.stride()", "__contains__": "(1 in {x})",
    "detach": "{x}.detach()", "requires_grad_": "{x}.requires_grad_()",
}


def _is_public_function(name, obj):
    return not name.startswith("_") and callable(obj) and not isinstance(obj, type) and not inspect.ismodule(obj)


def op_table(torch):
    """``{name: sorted forms}`` for every op-table name torch also has."""
    table = {}
    for name in METHODS:
        if hasattr(torch.Tensor, name):
            attr = inspect.getattr_static(gputorch.Tensor, name, None)
            form = "property" if isinstance(attr, property) else "method"
            table.setdefault(name, set()).add(form)
    for name in dir(gputorch):
        if _is_public_function(name, getattr(gputorch, name)) and hasattr(torch, name):
            table.setdefault(name, set()).add("function")
    return {name: sorted(forms) for name, forms in sorted(table.items())}


def gputorch_only_names(torch):
    """Op-table names torch does not have at all (nothing to compare against)."""
    names = [n for n in METHODS if not hasattr(torch.Tensor, n)]
    names += [n for n in dir(gputorch) if _is_public_function(n, getattr(gputorch, n)) and not hasattr(torch, n)
              and n not in METHODS]
    return sorted(names)


def _dunder_base(name):
    """``__radd__`` -> (``add``, "reflected"); ``__iadd__`` -> (``add``, "inplace")."""
    core = name[2:-2]
    if core in _op_specs.DUNDER_BASE:
        return _op_specs.DUNDER_BASE[core], "plain"
    if core[:1] == "r" and core[1:] in _op_specs.DUNDER_BASE:
        return _op_specs.DUNDER_BASE[core[1:]], "reflected"
    if core[:1] == "i" and core[1:] in _op_specs.DUNDER_BASE:
        return _op_specs.DUNDER_BASE[core[1:]], "inplace"
    return None, None


def _probe(torch, name, forms):
    """``unary``/``binary`` if torch accepts ``name`` with one/two float tensors."""
    x, y = torch.rand(2, 3), torch.rand(2, 3)
    for kind, args in (("unary", (x,)), ("binary", (x, y))):
        for form in forms:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if form == "function":
                        getattr(torch, name)(*[a.clone() for a in args])
                    elif form == "method":
                        getattr(args[0].clone(), name)(*args[1:])
                    else:
                        getattr(args[0], name)
                        if kind == "binary":
                            continue
                return kind
            except Exception:  # noqa: BLE001 - a probe
                continue
    return None


_GENERIC = {"unary": _specs_math.unary, "binary": _specs_math.binary}


def signature_for(torch, name, forms):
    """``("args", sig)``, ``("body", body_fn)`` or ``(None, reason)`` for an op name."""
    if name in _op_specs.NOT_COVERED:
        return None, _op_specs.NOT_COVERED[name]
    if name == "__getitem__":
        return "body", _index_specs.getitem
    if name == "__setitem__":
        shape_of = _index_specs.torch_index_shape(torch)
        return "body", lambda b: _index_specs.setitem(b, shape_of)
    if name in _op_specs.EXPLICIT:
        sig = _op_specs.EXPLICIT[name]
        return "args", (grad_free(sig) if name.endswith("_") else sig)
    inplace = reflected = False
    base = name
    if name.startswith("__") and name.endswith("__"):
        base, variant = _dunder_base(name)
        if base is None:
            return None, "dunder without a known base op"
        inplace, reflected = variant == "inplace", variant == "reflected"
    elif name.endswith("_"):
        base, inplace = name[:-1], True
    sig = _op_specs.EXPLICIT.get(base)
    if sig is None:
        base_forms = forms
        if base != name:
            base_forms = [f for f in ("function", "method") if
                          (f == "function" and hasattr(torch, base)) or (f == "method" and hasattr(torch.Tensor, base))]
        kind = _probe(torch, base, base_forms) if base_forms else None
        if kind is None:
            kind = _probe(torch, name, forms)
        if kind is None:
            return None, "no explicit signature and torch accepts neither one nor two tensors"
        sig = _GENERIC[kind]
    if reflected:
        sig = _reflected(sig)
    return "args", (grad_free(sig) if inplace else sig)


def _reflected(sig):
    """For ``x.__rOP__(y)`` (= ``y OP x``): swap two tensor operands, keeping ``x OP y``'s shapes."""
    def swapped(b):
        args, kwargs = sig(b)
        if len(args) >= 2 and args[0] in b.shapes and args[1] in b.shapes:
            args = [args[1], args[0]] + list(args[2:])
        return args, kwargs
    return swapped


def is_random(name):
    base = name[:-1] if name.endswith("_") and not name.endswith("__") else name
    return name in _op_specs.RANDOM_OPS or base in _op_specs.RANDOM_OPS


def case_seed(base_seed, name, index):
    """The per-case seed: independent of which other ops or cases run."""
    return [int(base_seed), zlib.crc32(name.encode()), int(index)]


def make_case(name, forms, kind, generator, base_seed, index, owner="T"):
    """Draw case ``index`` of op ``name`` (same seed -> same case).

    ``owner`` is the namespace of the function form (``T``, ``T.nn.functional``).
    """
    rng = np.random.default_rng(case_seed(base_seed, name if owner == "T" else f"{owner}.{name}", index))
    # nn.functional inputs carry NaN/inf/huge values in a minority of cases only.
    specials = owner == "T" or bool(rng.random() < 0.15)
    for _attempt in range(10):
        b = CaseBuilder(rng, specials=specials)
        if kind == "body":
            body = generator(b)
            break
        if name in PROTOCOL_BODIES:
            one_element = b.choice([(), (1,), (1, 1)]) if b.chance(0.6) else None
            body = PROTOCOL_BODIES[name].format(x=b.tensor(one_element, max_ndim=2))
            break
        args, kwargs = generator(b)
        form = forms[int(rng.integers(len(forms)))]
        tensor_first = bool(args) and args[0] in b.shapes
        if form in ("method", "property") and not tensor_first:
            if "function" not in forms:
                continue
            form = "function"
        rest = list(args[1:]) + [f"{k}={v}" for k, v in kwargs.items()]
        if form == "property":
            body = f"{args[0]}.{name}"
        elif form == "method":
            body = f"{args[0]}.{name}({', '.join(rest)})"
        else:
            body = f"{owner}.{name}({', '.join(list(args[:1]) + rest)})"
        break
    else:
        raise RuntimeError(f"could not draw a case for {name}")
    return Case(op=name, index=index, leaves=b.leaves, body=body, random=is_random(name))


def build_plan(torch):
    """``[(name, forms, kind, generator)]`` for every covered op, and ``{name: reason}`` not covered."""
    plan, not_covered = [], {}
    for name, forms in op_table(torch).items():
        kind, generator = signature_for(torch, name, forms)
        if kind is None:
            not_covered[name] = generator
        else:
            plan.append((name, forms, kind, generator))
    for name in PROTOCOL_BODIES:
        plan.append((name, ["method"], "protocol", None))
    return plan, not_covered
