"""Drawing the profiler's autograd-graph snapshot (``autograd_graph.py``) as a ``graphviz.Digraph``.

The picture answers "what is holding my activation memory": each node shows the bytes its saved
tensors hold (its tooltip lists them), nodes sit in boxes (clusters) of the module whose forward
recorded them, leaves' accumulators show their parameter's name, and the ``top`` largest holders are
filled red (the others shaded by what they hold).

A graph of more than ``max_nodes`` nodes is folded so that it stays readable (a 6-layer transformer
records hundreds of nodes). First, repeated modules: of a run of numbered siblings that recorded
the same ops and hold the same bytes (``blocks.0`` ... ``blocks.5``), the first is drawn and the
others become one box ("blocks.1 ... blocks.5 (TransformerEncoderLayer x5): 48 nodes, holds
10.50 MiB each"). Then, if still too large, every module below the deepest depth that fits
becomes one box, except the top holders, which stay drawn inside their module's cluster; nodes
recorded outside every module fold into one ``<no module>`` box last.

:func:`graph_panel` is the HTML report's section showing the drawing (as SVG when Graphviz's
``dot`` program is installed, else as DOT source with a note).
"""
from ..utils.viz import require_graphviz
from ._format import format_bytes
from .categories import ACTIVATIONS

__all__ = ["draw_graph", "graph_panel"]

_TOP_FILL = "#e15759"
_SHADES = ("#ffffff", "#fdf0d5", "#fbd9a6", "#f8b878", "#f4904f")   # by share of the largest holder
_PARAM_FILL = "lightblue"


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


def _subtrees(nodes):
    """``{module path: the nodes recorded inside it or its submodules}``."""
    out = {}
    for n in nodes:
        parts = _parts(_node_module(n))
        for k in range(1, len(parts) + 1):
            out.setdefault(".".join(parts[:k]), []).append(n)
    return out


def _fold_repeats(subtrees, types):
    """Runs of numbered sibling modules (``blocks.0`` ... ``blocks.5``) that recorded the same ops
    and hold the same bytes: the first of each run stays, the others fold into one box. Returns
    ``({node id: box}, {box: (module path of its first member, members, nodes each, bytes each)})``."""
    by_parent = {}
    for path in subtrees:
        parent, _, last = path.rpartition(".")
        if last.isdigit():
            by_parent.setdefault(parent, []).append((int(last), path))
    folded, boxes = {}, {}
    for parent in sorted(by_parent, key=lambda p: len(_parts(p))):     # outer repeats first
        runs = []
        for index, path in sorted(by_parent[parent]):
            sig = (types.get(path), len(subtrees[path]), _unique_held(subtrees[path]),
                   tuple(sorted(n["name"] for n in subtrees[path])))
            if runs and runs[-1][-1][0] == index - 1 and runs[-1][-1][2] == sig:
                runs[-1].append((index, path, sig))
            else:
                runs.append([(index, path, sig)])
        for run in runs:
            rest = [path for _, path, _ in run[1:]]
            if not rest or any(n["id"] in folded for n in subtrees[rest[0]]):
                continue
            box = rest[0] if len(rest) == 1 else f"{rest[0]} ... {rest[-1]}"
            boxes[box] = (rest[0], len(rest), len(subtrees[rest[0]]), _unique_held(subtrees[rest[0]]))
            for path in rest:
                folded.update((n["id"], box) for n in subtrees[path])
    return folded, boxes


def _fold_deep(nodes, keep, folded, max_nodes):
    """Fold modules below the deepest depth at which the drawing has at most ``max_nodes``
    nodes (each such module one box; the nodes in ``keep`` stay): ``{node id: box}``. If even
    depth 1 is too many, the nodes of the model itself and those of no module fold too
    (``<model>``, ``<no module>``): a graph of plain tensor code stays drawable."""
    rest = [n for n in nodes if n["id"] not in folded]
    deepest = max((len(_parts(_node_module(n))) for n in rest), default=0)

    def size(out):
        return len(set(out.values())) + len(set(folded.values())) + len(rest) - len(out)
    out = {}
    for depth in range(deepest, 0, -1):
        out = {}
        for n in rest:
            parts = _parts(_node_module(n))
            if n["id"] not in keep and len(parts) >= depth:
                out[n["id"]] = ".".join(parts[:depth])
        if size(out) <= max_nodes:
            return out
    for n in rest:
        if n["id"] not in keep and n["id"] not in out:
            out[n["id"]] = "<no module>" if _node_module(n) is None else "<model>"
    return out


def draw_graph(snapshot, module_types=None, max_nodes=80, top=8):
    """The ``graphviz.Digraph`` of a graph snapshot (see the module docstring)."""
    graphviz = require_graphviz("drawing the autograd graph")
    types = module_types or {}
    nodes = snapshot["nodes"]
    subtrees = _subtrees(nodes)
    folded, boxes = _fold_repeats(subtrees, types) if len(nodes) > max_nodes else ({}, {})
    ranked = sorted((n for n in nodes if n["held"] > 0 and n["id"] not in folded), key=lambda n: (-n["held"], n["id"]))
    holders = {n["id"] for n in ranked[:top]}
    largest = ranked[0]["held"] if ranked else 0
    if len(nodes) - len(folded) + len(boxes) > max_nodes:
        deep = _fold_deep(nodes, holders, folded, max_nodes)
        members = {}
        for n in nodes:
            if n["id"] in deep:
                members.setdefault(deep[n["id"]], []).append(n)
        for box, inside in members.items():
            boxes[box] = (box, 1, len(inside), _unique_held(inside))
        folded.update(deep)
    holder_modules = {".".join(_parts(_node_module(n))[:k]) for n in nodes if n["id"] in holders
                      for k in range(1, len(_parts(_node_module(n))) + 1)}

    g = graphviz.Digraph("autograd_memory", graph_attr={
        "label": f"autograd graph at its fullest (step {snapshot['step']}): saved tensors hold "
                 f"{format_bytes(snapshot['held'])}; red: the {len(holders)} largest holders",
        "labelloc": "t", "fontsize": "14", "rankdir": "TB"},
        node_attr={"shape": "box", "style": "filled", "fontsize": "10", "height": "0.2",
                   "fontname": "monospace"})
    clusters = {}      # module path -> [(graphviz node name, attributes)]
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
        clusters.setdefault(_node_module(n), []).append((f"n{n['id']}", attrs))
    for box, (first, count, each_nodes, each_held) in boxes.items():
        kind = types.get(first)
        if count > 1:
            title = f"{box} ({kind} x{count})" if kind else f"{box} (x{count})"
            body = f"{each_nodes} nodes, holds {format_bytes(each_held)} each"
        else:
            title, body = _label(box, types), f"{each_nodes} nodes, holds {format_bytes(each_held)}"
        where = box if box in holder_modules else _parent(first)
        clusters.setdefault(where, []).append((f"b_{box}", {
            "label": f"{title}\n{body}", "shape": "box3d", "tooltip": f"{count * each_nodes} graph nodes folded",
            "fillcolor": _shade(each_held, largest * 4) if each_held else "#f0f0f0"}))
    _emit_clusters(g, clusters, types)
    seen = set()
    for a, b in snapshot["edges"]:
        ra = f"b_{folded[a]}" if a in folded else f"n{a}"
        rb = f"b_{folded[b]}" if b in folded else f"n{b}"
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


def graph_panel(report):
    """The HTML report's graph panel: the drawing as inline SVG when Graphviz's ``dot`` program is
    installed, else its DOT source with a note saying how to see it drawn ("" without a graph)."""
    import html
    import shutil
    if report.autograd_graph is None:
        return ""
    head = ("<h2 id=\"graph\">What holds the activations: the autograd graph</h2><p>The graph when it held the most "
            "(as a backward pass started): each node with the bytes its saved tensors hold (hover for "
            "them), in the boxes of the modules that recorded them; red: the largest holders; repeated "
            "modules drawn once.</p>")
    try:
        digraph = report.graph()
    except ImportError as e:
        return head + f"<p class=\"note\">{html.escape(str(e))}</p>"
    if shutil.which("dot"):
        try:
            svg = digraph.pipe(format="svg").decode("utf-8")
            return head + '<div class="graph">' + svg[svg.index("<svg"):] + "</div>"
        except Exception as e:           # a broken Graphviz install: fall back to the source
            note = f"Graphviz's dot failed ({html.escape(str(e).splitlines()[0])})"
    else:
        note = "Graphviz's dot program is not installed (apt install graphviz, brew install graphviz)"
    return (head + f"<p class=\"note\">{note}: the graph's DOT source follows; paste it into any Graphviz "
            "viewer or run <code>dot -Tsvg</code> on it.</p><pre class=\"dot\">"
            + html.escape(digraph.source) + "</pre>")
