"""Drawing the profiler's autograd-graph snapshot (``autograd_graph.py``) as a ``graphviz.Digraph``.

The picture answers "what is holding my activation memory": each node shows the bytes its saved
tensors hold (its tooltip lists them), nodes sit in boxes (clusters) of the module whose forward
recorded them, leaves' accumulators show their parameter's name, and the ``top`` largest holders are
filled red (the others shaded by what they hold).

A graph of more than ``max_nodes`` nodes is folded so that it stays readable (a 6-layer transformer
records thousands of nodes): modules deeper than some depth become one box each ("blocks.3
(Block): 112 nodes, holds 12.0 MiB"), the depth chosen as the deepest that fits, with the top
holders still drawn in their module's box; runs of sibling boxes of the same class, size and
holding (``blocks.1`` ... ``blocks.4``) then merge into one (``blocks.1 ... blocks.4 (Block x4)``).
"""
from ._format import format_bytes
from .categories import ACTIVATIONS

__all__ = ["draw_graph"]

_TOP_FILL = "#e15759"
_SHADES = ("#ffffff", "#fdf0d5", "#fbd9a6", "#f8b878", "#f4904f")   # by share of the largest holder
_PARAM_FILL = "lightblue"


def _graphviz():
    try:
        import graphviz
    except ImportError as e:
        raise ImportError("drawing the autograd graph needs the graphviz package: pip install graphviz "
                          "(rendering it to SVG or PNG also needs Graphviz's dot program: apt install graphviz)") from e
    return graphviz


def _parts(path):
    return [] if not path else path.split(".")


def _node_module(node):
    """A node's module path; a leaf's accumulator belongs to its parameter's module."""
    if node["param"] is not None and not node["param"].startswith("<"):
        head, _, _ = node["param"].rpartition(".")
        return head
    return node["module"]


def _shade(held, largest):
    if held <= 0 or largest <= 0:
        return _SHADES[0]
    return _SHADES[min(len(_SHADES) - 1, 1 + int(3 * held / largest))]


def _label(path, types):
    name = "<model>" if path == "" else path
    kind = types.get(path)
    return f"{name} ({kind})" if kind else name


def _unique_held(nodes):
    held = {}
    for n in nodes:
        for s in n["saved"]:
            if s["category"] == ACTIVATIONS:
                held[s["rid"]] = s["bytes"]
    return sum(held.values())


def _fold(nodes, keep, depth):
    """``{node id: box path}`` for the nodes folded at ``depth`` (modules of at least ``depth``
    components, cut to ``depth``); the nodes in ``keep`` stay."""
    folded = {}
    for n in nodes:
        parts = _parts(_node_module(n))
        if n["id"] not in keep and len(parts) >= depth and depth > 0:
            folded[n["id"]] = ".".join(parts[:depth])
    return folded


def _merge_runs(boxes, types, keep):
    """Merge runs of numbered sibling boxes (``a.1``, ``a.2``, ...) of one class with equal node
    counts and holdings, leaving out the boxes in ``keep``: ``{box path: merged name}``."""
    by_parent = {}
    for path in boxes:
        parent, _, last = path.rpartition(".")
        if last.isdigit() and path not in keep:
            by_parent.setdefault(parent, []).append((int(last), path))
    renamed = {}
    for items in by_parent.values():
        items.sort()
        runs = []
        for index, path in items:
            prev = runs[-1][-1] if runs else None
            if prev is not None and index == prev[0] + 1 and types.get(path) == types.get(prev[1]) \
                    and boxes[path] == boxes[prev[1]]:
                runs[-1].append((index, path))
            else:
                runs.append([(index, path)])
        for run in runs:
            if len(run) > 1:
                name = f"{run[0][1]} ... {run[-1][1]}"
                renamed.update((path, name) for _, path in run)
    return renamed


def draw_graph(snapshot, module_types=None, max_nodes=120, top=8):
    """The ``graphviz.Digraph`` of a graph snapshot (see the module docstring)."""
    graphviz = _graphviz()
    types = module_types or {}
    nodes = snapshot["nodes"]
    by_id = {n["id"]: n for n in nodes}
    ranked = sorted((n for n in nodes if n["held"] > 0), key=lambda n: (-n["held"], n["id"]))
    holders = {n["id"] for n in ranked[:top]}
    largest = ranked[0]["held"] if ranked else 0

    folded = {}
    if len(nodes) > max_nodes:
        deepest = max((len(_parts(_node_module(n))) for n in nodes), default=0)
        for depth in range(deepest, 0, -1):
            folded = _fold(nodes, holders, depth)
            if len(set(folded.values())) + len(nodes) - len(folded) <= max_nodes:
                break
    members = {}
    for nid, box in folded.items():
        members.setdefault(box, []).append(by_id[nid])
    boxes = {box: (len(ns), _unique_held(ns)) for box, ns in members.items()}
    holders_in = {_node_module(by_id[h]) for h in holders}
    holders_in |= {".".join(_parts(p)[:k]) for p in list(holders_in) if p for k in range(1, len(_parts(p)))}
    merged = _merge_runs(boxes, types, holders_in)

    g = graphviz.Digraph("autograd_memory", graph_attr={
        "label": f"autograd graph at its fullest (step {snapshot['step']}): saved tensors hold "
                 f"{format_bytes(snapshot['held'])}; red: the {len(holders)} largest holders",
        "labelloc": "t", "fontsize": "14", "rankdir": "TB", "compound": "true"},
        node_attr={"shape": "box", "style": "filled", "fontsize": "10", "height": "0.2",
                   "fontname": "monospace"})

    def rep(nid):
        box = folded.get(nid)
        if box is None:
            return f"n{nid}"
        return "b_" + merged.get(box, box)

    clusters = {}      # module path -> [(graphviz name, attrs)]

    def place(path, name, attrs):
        clusters.setdefault(path, []).append((name, attrs))

    for n in nodes:
        if n["id"] in folded:
            continue
        held = n["held"]
        if n["param"] is not None:
            label, fill = n["param"], _PARAM_FILL
        else:
            label = n["name"] + (f"\n{format_bytes(held)}" if held else "")
            fill = _TOP_FILL if n["id"] in holders else _shade(held, largest)
        tip = "\n".join(f"{'x'.join(map(str, s['shape'])) or 'scalar'} {s['dtype']} {format_bytes(s['bytes'])} "
                        f"({s['category']})" for s in n["saved"]) or "nothing saved"
        attrs = {"label": label, "fillcolor": fill, "tooltip": tip}
        if n["id"] in holders:
            attrs.update(fontcolor="white", penwidth="2")
        place(_node_module(n), f"n{n['id']}", attrs)
    done = set()
    for box, (count, held) in boxes.items():
        name = merged.get(box, box)
        if name in done:
            continue
        done.add(name)
        run = [b for b in boxes if merged.get(b, b) == name]
        kind = types.get(box)
        title = f"{name} ({kind} x{len(run)})" if len(run) > 1 else _label(box, types)
        each = " each" if len(run) > 1 else ""
        place(box if box in holders_in else _parent(box), "b_" + name, {
            "label": f"{title}\n{count} nodes{each}, holds {format_bytes(held)}{each}", "shape": "box3d",
            "fillcolor": _shade(held, largest * 4) if held else "#f0f0f0",
            "tooltip": f"{len(run) * count} graph nodes folded"})

    _emit_clusters(g, clusters, types)
    seen = set()
    for a, b in snapshot["edges"]:
        ra, rb = rep(a), rep(b)
        if ra != rb and (ra, rb) not in seen:
            seen.add((ra, rb))
            g.edge(ra, rb)
    return g


def _parent(path):
    return path.rpartition(".")[0] if path and "." in path else ("" if path else None)


def _emit_clusters(g, clusters, types):
    """Nodes into nested clusters by module path (the model, ``""``, and no module at top level)."""
    paths = {p for p in clusters if p}
    for p in list(paths):
        parts = _parts(p)
        paths |= {".".join(parts[:k]) for k in range(1, len(parts))}
    children = {}
    for p in paths:
        children.setdefault(_parent(p), []).append(p)

    def emit(graph, path):
        for name, attrs in clusters.get(path, ()):
            graph.node(name, **attrs)
        for child in sorted(children.get(path, ())):
            with graph.subgraph(name="cluster_" + child) as sub:
                sub.attr(label=_label(child, types), style="rounded", color="#888888", fontsize="11")
                emit(sub, child)
    for name, attrs in clusters.get(None, ()):
        g.node(name, **attrs)
    emit(g, "")
