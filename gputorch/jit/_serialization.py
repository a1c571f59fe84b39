"""``jit.save``/``jit.load``: a traced module as one zip file, ``graph.json`` (the IR) and one
``.npy`` file per tensor, read back with ``allow_pickle=False``: loading runs no code from the
file. An op is named by its node class (``module:qualname``), and only classes inside gputorch load.
"""
import copy
import importlib
import io
import json
import math
import zipfile

import numpy as np

from .. import _dtype
from .._device import device as Device
from ._graph import Graph, GraphNode, is_param_ref
from ._traced_module import TracedModule

__all__ = ["save", "load"]

_FORMAT = "gputorch.jit/1"


def _class_path(cls):
    return f"{cls.__module__}:{cls.__qualname__}"


def _load_class(path):
    module, _, qualname = path.partition(":")
    if module != "gputorch" and not module.startswith("gputorch."):
        raise RuntimeError(f"jit.load: the file names a class outside gputorch ({path}); refusing to load it")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _encode(x):
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else {"float": repr(x)}
    if isinstance(x, tuple):
        return {"tuple": [_encode(v) for v in x]}
    if isinstance(x, list):
        return {"list": [_encode(v) for v in x]}
    if isinstance(x, slice):
        return {"slice": [_encode(x.start), _encode(x.stop), _encode(x.step)]}
    if x is Ellipsis:
        return {"ellipsis": True}
    if isinstance(x, np.ndarray) and x.dtype.kind in "biu":     # a constant index (x[:, [0, 2]])
        return {"ndarray": x.reshape(-1).tolist(), "array_dtype": x.dtype.str, "shape": list(x.shape)}
    if isinstance(x, _dtype.dtype):
        return {"dtype": x.name}
    if isinstance(x, Device):
        return {"device": str(x)}
    cls = type(x)
    if cls.__module__.startswith("gputorch."):
        names = getattr(cls, "__slots__", None) or list(vars(x))
        return {"object": _class_path(cls), "state": {n: _encode(getattr(x, n)) for n in names}}
    raise TypeError(f"jit.save: cannot store a {cls.__name__} argument of a traced op")


def _decode(x):
    if not isinstance(x, dict):
        return x
    if "float" in x:
        return float(x["float"])
    if "tuple" in x:
        return tuple(_decode(v) for v in x["tuple"])
    if "list" in x:
        return [_decode(v) for v in x["list"]]
    if "slice" in x:
        return slice(*(_decode(v) for v in x["slice"]))
    if "ellipsis" in x:
        return Ellipsis
    if "ndarray" in x:
        return np.array(x["ndarray"], dtype=np.dtype(x["array_dtype"])).reshape(x["shape"])
    if "dtype" in x:
        return getattr(_dtype, x["dtype"])
    if "device" in x:
        return Device(x["device"])
    if "object" in x:
        obj = object.__new__(_load_class(x["object"]))
        for name, value in x["state"].items():
            setattr(obj, name, _decode(value))
        return obj
    raise ValueError(f"jit.load: unknown entry {sorted(x)}")


def _encode_ref(ref):
    kind, v = ref
    if kind == "value":
        return {"value": v}
    if kind == "list":
        return {"refs": [_encode_ref(r) for r in v]}
    if kind == "array":
        return {"array": [v[0], bool(v[1])]}
    if kind == "index":     # the traced arrays are left out: the replay puts the values' arrays there
        index, subs = v
        holes = {(field, position) for field, position, _ in subs}
        blank = copy.copy(index)
        for field in ("pre", "post"):
            key = getattr(index, field)
            if key is not None:
                setattr(blank, field, tuple(None if (field, p) in holes else k for p, k in enumerate(key)))
        return {"index": _encode(blank), "subs": [list(s) for s in subs]}
    return {"const": _encode(v)}


def _decode_ref(ref):
    if "value" in ref:
        return ("value", ref["value"])
    if "refs" in ref:
        return ("list", [_decode_ref(r) for r in ref["refs"]])
    if "array" in ref:
        return ("array", (ref["array"][0], ref["array"][1]))
    if "index" in ref:
        return ("index", (_decode(ref["index"]), tuple(tuple(s) for s in ref["subs"])))
    return ("const", _decode(ref["const"]))


def save(module, f):
    """Write a traced module to ``f`` (a path or a binary file object)."""
    if not isinstance(module, TracedModule):
        raise TypeError("jit.save expects a module made by gputorch.jit.trace")
    graph = module.graph
    from .. import nn
    tensors = {}
    for name, attr in module._param_attrs.items():
        t = getattr(module, attr)
        tensors[name] = (t.detach().cpu().numpy(), isinstance(t, nn.Parameter))
    doc = {
        "format": _FORMAT, "single_output": module._single, "inputs": graph.inputs, "outputs": graph.outputs,
        "input_info": {n: [list(graph.info[n][0]), graph.info[n][1].name] for n in graph.inputs},
        "params": list(graph.params), "constants": list(graph.constants),
        "requires_grad": {n: bool(g) for n, (_, g) in tensors.items()},
        "nodes": [{"op": _class_path(n.op), "args": [_encode_ref(r) for r in n.args],
                   "params": {k: {"ref": _encode_ref(v)} if is_param_ref(v) else _encode(v)
                              for k, v in n.params.items()},
                   "outputs": n.outputs, "scope": n.scope}
                  for n in graph.nodes],
    }
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("graph.json", json.dumps(doc))
        for k, (name, (array, _)) in enumerate(tensors.items()):
            buf = io.BytesIO()
            np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
            z.writestr(f"tensors/{k}.npy", buf.getvalue())


def load(f, map_location=None):
    """Read a traced module written by :func:`save` (tensors on ``map_location``, CPU by default)."""
    from .. import nn
    from ..ops.creation import tensor
    with zipfile.ZipFile(f) as z:
        doc = json.loads(z.read("graph.json"))
        if doc.get("format") != _FORMAT:
            raise RuntimeError(f"jit.load: not a gputorch traced module (format {doc.get('format')!r})")
        names = doc["params"] + doc["constants"]
        arrays = {name: np.load(io.BytesIO(z.read(f"tensors/{k}.npy")), allow_pickle=False)
                  for k, name in enumerate(names)}
    dev = Device(map_location) if map_location is not None else Device("cpu")
    graph = Graph()
    graph.inputs, graph.outputs = doc["inputs"], doc["outputs"]
    graph.info = {n: (tuple(shape), getattr(_dtype, dt)) for n, (shape, dt) in doc["input_info"].items()}
    for name in doc["params"]:
        t = tensor(arrays[name], device=dev)
        graph.params[name] = nn.Parameter(t) if doc["requires_grad"].get(name) else t
    for name in doc["constants"]:
        graph.constants[name] = tensor(arrays[name], device=dev)
    graph.nodes = [GraphNode(_load_class(n["op"]), [_decode_ref(r) for r in n["args"]],
                             {k: _decode_ref(v["ref"]) if isinstance(v, dict) and "ref" in v else _decode(v)
                              for k, v in n["params"].items()}, n["outputs"], n["scope"])
                   for n in doc["nodes"]]
    return TracedModule(graph, doc["single_output"])
