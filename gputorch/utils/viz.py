"""``make_dot``: the autograd graph behind a tensor as a ``graphviz.Digraph``.

The drawing torchviz users know: the output tensor(s) in green, one box per graph node named as
PyTorch names it (``AddmmBackward0``, ``TBackward0``, ``AccumulateGrad``), leaves that require grad
in blue with their parameter name and shape, edges running from a node's inputs to the node. With
``show_saved`` the tensors a node holds for backward hang off it in orange (``result`` for its own
output); with ``show_attrs`` each node's box lists them. Node ids are the Python ids of the nodes
and tensors, as torchviz's are, so the two drawings of one graph can be compared node by node.

Needs the ``graphviz`` package; rendering to SVG or PNG (``dot.render``) also needs Graphviz's
``dot`` program (Debian: ``apt install graphviz``), while ``dot.source`` works without it.
"""

__all__ = ["make_dot", "require_graphviz"]

_NODE_STYLE = {"style": "filled", "shape": "box", "align": "left", "fontsize": "10", "ranksep": "0.1",
               "height": "0.2", "fontname": "monospace"}


def require_graphviz(what):
    """The ``graphviz`` module, or an ImportError saying that ``what`` needs it and how to install it."""
    try:
        import graphviz
    except ImportError as e:
        raise ImportError(f"{what} needs the graphviz package: pip install graphviz (rendering to SVG or PNG "
                          "also needs Graphviz's dot program: apt install graphviz)") from e
    return graphviz


def _size(tensor):
    return "(" + ", ".join(str(s) for s in tensor.shape) + ")"


def _saved_entries(fn):
    """``[(name, tensor or value)]`` that a node holds for backward (none once backward freed them)."""
    from ..autograd.saved_names import SAVED_NAMES
    entries = []
    saved = getattr(fn, "_saved", None)
    names = SAVED_NAMES.get(type(fn).__name__, ())
    if saved:
        for i, s in enumerate(saved):
            value = getattr(s, "tensor", None)
            if value is None:
                value = getattr(s, "packed", getattr(s, "value", None))
            name = names[i] if i < len(names) and names[i] else f"saved_{i}"   # PyTorch's name where known
            entries.append((name, value))
    result = getattr(fn, "_result_saved", None)
    if result is not None and getattr(result, "tensor", None) is not None:
        entries.append(("result", result.tensor))
    return entries


def _attr_text(entries, max_chars):
    """The ``show_attrs`` lines: names left, values right, under a rule as wide as the widest line."""
    from .._tensor import Tensor
    rows = []
    for name, value in entries:
        text = "[saved tensor]" if isinstance(value, Tensor) else str(value)
        if len(text) > max_chars:
            text = text[:max_chars - 3] + "..."
        rows.append((name, text))
    if not rows:
        return ""
    left = max(len(n) for n, _ in rows)
    right = max(len(t) for _, t in rows)
    lines = [f"{n.ljust(left)}: {t.rjust(right)}" for n, t in rows]
    return "\n" + "-" * max(len(line) for line in lines) + "\n" + "\n".join(lines)


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50):
    """The autograd graph that produced ``var`` (a tensor, or a tuple/list of tensors) as a
    ``graphviz.Digraph``; ``params``: ``{name: tensor}`` (``dict(model.named_parameters())``)
    names the leaves. See the module docstring for what is drawn."""
    from .._tensor import Tensor
    graphviz = require_graphviz("make_dot")
    if params is not None:
        if not all(isinstance(p, Tensor) for p in params.values()):
            raise TypeError("make_dot: params should map names to tensors")
        names = {id(p): name for name, p in params.items()}
    else:
        names = {}
    dot = graphviz.Digraph(node_attr=dict(_NODE_STYLE), graph_attr={"size": "12,12"})
    seen = set()        # ids of the nodes and output tensors drawn (tensors compare elementwise)

    def tensor_node(t, fill, name=None):
        label = name if name is not None else names.get(id(t), "")
        dot.node(str(id(t)), f"{label}\n {_size(t)}", fillcolor=fill)

    def add_node(fn):
        if id(fn) in seen:
            return
        seen.add(id(fn))
        entries = _saved_entries(fn) if (show_saved or show_attrs) else []
        if show_saved:
            for name, value in entries:
                if isinstance(value, Tensor):
                    dot.edge(str(id(fn)), str(id(value)), dir="none")
                    tensor_node(value, "orange", name)
        variable = getattr(fn, "variable", None)
        if isinstance(variable, Tensor):       # a leaf's AccumulateGrad
            tensor_node(variable, "lightblue")
            dot.edge(str(id(variable)), str(id(fn)))
        label = fn.name() + (_attr_text(entries, max_attr_chars) if show_attrs else "")
        dot.node(str(id(fn)), label)
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                dot.edge(str(id(nxt)), str(id(fn)))
                add_node(nxt)

    def add_output(t):
        if id(t) in seen:
            return
        seen.add(id(t))
        tensor_node(t, "darkolivegreen1")
        if t.grad_fn is not None:
            add_node(t.grad_fn)
            dot.edge(str(id(t.grad_fn)), str(id(t)))
        if t._is_view() and t._base is not None and t._base is not t:
            tensor_node(t._base, "darkolivegreen3")
            dot.edge(str(id(t._base)), str(id(t)), style="dotted")

    for t in (var if isinstance(var, (tuple, list)) else (var,)):
        add_output(t)
    return dot
