"""The backward engine.

Runs graph nodes in dependency order from an explicit work list (no recursion,
so a chain of 100,000 ops is fine). Among ready nodes the most recently created
runs first, as in PyTorch. Each node's incoming gradient buffer is dropped as
soon as the node has consumed it, and its saved tensors are released unless
``retain_graph`` is set.
"""
import heapq
import sys

from ..amp.autocast_mode import STATE as AUTOCAST, disabled as autocast_disabled
from ..backends.base import elements_share_memory
from . import anomaly_mode, grad_mode
from .node import AccumulateGrad, grad_accumulator

_GRAD_ENABLED = grad_mode.GRAD_ENABLED

# Observers of backward passes: ``hook(True)`` when :func:`run` starts executing the graph,
# ``hook(False)`` when it is done (also on errors; nested for reentrant backward). The memory
# profiler's "backward" phase comes from here; empty, it costs one check per backward.
RUN_HOOKS = []

# Observers of the graph a backward pass runs: ``hook(roots)`` with its root nodes before any node
# runs, and ``hook(node)`` in NODE_HOOKS before each node's hooks and backward. The memory profiler
# draws the graph from the first and charges what a node's backward allocates from the second;
# empty, they cost one check per backward and one per node.
GRAPH_HOOKS = []
NODE_HOOKS = []

# Callbacks queued during a backward pass (``Variable._execution_engine.queue_callback``): one list
# per running backward (reentrant backward nests), run in order once that backward's graph is done.
_CALLBACKS = []

_Tensor = None


def _tensor_cls():
    global _Tensor
    if _Tensor is None:
        from .._tensor import Tensor
        _Tensor = Tensor
    return _Tensor


def _make_grads(outputs, grad_outputs):
    """Default and check the gradients the backward pass starts from."""
    Tensor = _tensor_cls()
    grads = []
    for i, out in enumerate(outputs):
        g = None if grad_outputs is None else grad_outputs[i]
        if g is None:
            if out._requires_grad and out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out._requires_grad and out._dtype.is_complex:
                raise RuntimeError("grad can be implicitly created only for real scalar outputs")
            if out._requires_grad:
                data = out._data
                ctx = out._device._ctx  # CuPy's copy() and fill() run on the current device: the output's
                if ctx is None:
                    ones = data.copy()
                    ones.fill(1)
                else:
                    with ctx:
                        ones = data.copy()
                        ones.fill(1)
                g = Tensor._make(ones, out._device, out._dtype)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradients must be Tensors or None, got {type(g).__name__}")
            if g._data.shape != out._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {list(g.shape)} and output[{i}] "
                    f"has a shape of {list(out.shape)}.")
            if g._device is not out._device:
                raise RuntimeError(
                    f"Mismatch in device: grad_output[{i}] is on {g._device} and output[{i}] is on {out._device}")
            if g._dtype.is_floating_point != out._dtype.is_floating_point:
                raise RuntimeError(
                    f"For complex/real mismatch: grad_output[{i}] has dtype {g._dtype} and output[{i}] "
                    f"has dtype {out._dtype}")
        grads.append(g)
    return grads


def _as_tuple(x):
    Tensor = _tensor_cls()
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """``gputorch.autograd.backward``: accumulate gradients of ``tensors`` into leaves' ``.grad``."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors)
    if grad_tensors is not None and len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} gradients for {len(tensors)} tensors")
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    for t in tensors:
        if not t._requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grad_tensors)
    results = run(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)
    if inputs is not None:
        # Leaves were accumulated by their AccumulateGrad nodes; non-leaf inputs get .grad here.
        for t, g in zip(inputs, results):
            if t._grad_fn is not None and g is not None and not t._retains_grad:  # retain_grad did it
                t._grad = (g.clone() if create_graph else g._copy_detached()) if t._grad is None else t._grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """``gputorch.autograd.grad``: the gradients of ``outputs`` with respect to ``inputs``."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if not allow_unused and materialize_grads:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True")
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by gputorch")
    grad_outputs = _as_tuple(grad_outputs)
    if grad_outputs is not None and len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad_outputs has {len(grad_outputs)} entries but there are {len(outputs)} outputs")
    for i, t in enumerate(outputs):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    for i, t in enumerate(inputs):
        if not t._requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(outputs, grad_outputs)
    result = run(outputs, grads, retain_graph, create_graph, inputs=inputs, accumulate=False)
    for i, g in enumerate(result):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"One of the differentiated Tensors (input {i}) appears to not have been used in the graph. "
                "Set allow_unused=True if this is the desired behavior.")
    if materialize_grads:
        from ..ops.creation import zeros_like
        result = [zeros_like(x) if g is None else g for x, g in zip(inputs, result)]
    return tuple(result)


class _Capture:
    """Where the gradient for one of ``inputs`` is picked up."""
    __slots__ = ("index", "output_nr")

    def __init__(self, index, output_nr):
        self.index = index
        self.output_nr = output_nr


def run(outputs, grads, retain_graph, create_graph, inputs=None, accumulate=True):
    """Execute the graph behind ``outputs`` with starting gradients ``grads``.

    With ``accumulate`` the leaves' ``.grad`` are updated (restricted to ``inputs`` if
    given); otherwise the gradients for ``inputs`` are returned and nothing is accumulated.
    Autocast is off while it runs (PyTorch's backward ops run in their forward ops' dtypes).
    """
    if AUTOCAST.active:
        with autocast_disabled():
            return _run(outputs, grads, retain_graph, create_graph, inputs, accumulate)
    return _run(outputs, grads, retain_graph, create_graph, inputs, accumulate)


def _run(outputs, grads, retain_graph, create_graph, inputs, accumulate):
    roots = []
    for out, g in zip(outputs, grads):
        if g is None:
            continue
        fn = out._grad_fn
        if fn is None and out._requires_grad:
            fn = grad_accumulator(out)
        roots.append((fn, out._output_nr, g))

    # Dependencies: how many edges lead into each node from the part of the graph we run.
    deps = {}
    stack = list({fn: None for fn, _, _ in roots})  # a node with several root outputs counts once
    seen = set(stack)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None:
                if nxt in deps:
                    deps[nxt] += 1
                else:
                    deps[nxt] = 1
                    if nxt not in seen:
                        seen.add(nxt)
                        stack.append(nxt)

    captures = None
    results = None
    needed = None
    if inputs is not None:
        captures = {}
        results = [None] * len(inputs)
        for i, t in enumerate(inputs):
            if t._grad_fn is not None:
                node, nr = t._grad_fn, t._output_nr
            else:
                node, nr = grad_accumulator(t), 0
            captures.setdefault(node, []).append(_Capture(i, nr))
        needed = _nodes_leading_to(captures, seen, roots)

    # Gradient buffers: node -> list of gradients, one per output of that node's forward.
    buffers = {}
    for fn, nr, g in roots:
        _add_to_buffer(buffers, fn, nr, g)

    # Ready nodes, most recently created first (sequence numbers are unique, so nodes are never compared).
    ready = [(-fn._sequence_nr, fn) for fn in {fn: None for fn, _, _ in roots} if deps.get(fn, 0) == 0]
    heapq.heapify(ready)

    prev_mode = _GRAD_ENABLED.value
    _GRAD_ENABLED.value = bool(create_graph)
    check_nan = anomaly_mode.ENABLED[0] and anomaly_mode.CHECK_NAN[0]
    heappop = heapq.heappop
    if RUN_HOOKS:
        for hook in RUN_HOOKS:
            hook(True)
    if GRAPH_HOOKS:
        for hook in GRAPH_HOOKS:
            hook([fn for fn, _, _ in roots])
    _CALLBACKS.append([])
    try:
        while ready:
            node = heappop(ready)[1]
            grad_outputs = buffers.pop(node, None)
            if grad_outputs is None:
                grad_outputs = [None] * node._num_outputs
            # The node's hooks, backward and accumulation run with its gradients' device current
            # (a GPU other than the current one needs it; the CPU has no device context).
            if NODE_HOOKS:
                for hook in NODE_HOOKS:
                    hook(node)
            dev_ctx = _device_context(grad_outputs)
            if dev_ctx is not None:
                dev_ctx.__enter__()
            try:
                _run_node(node, grad_outputs, captures, results, accumulate, needed, create_graph,
                          retain_graph, check_nan, buffers, deps, ready)
            finally:
                if dev_ctx is not None:
                    dev_ctx.__exit__(None, None, None)
        callbacks = _CALLBACKS[-1]
        while callbacks:                  # a callback may queue another one
            callbacks.pop(0)()
    finally:
        _CALLBACKS.pop()
        _GRAD_ENABLED.value = prev_mode
        if RUN_HOOKS:
            for hook in RUN_HOOKS:
                hook(False)
    return results


def _device_context(grad_outputs):
    """The device context of the first gradient (None on the CPU or with no gradient)."""
    for g in grad_outputs:
        if g is not None:
            return g._device._ctx
    return None


def _run_node(node, grad_outputs, captures, results, accumulate, needed, create_graph, retain_graph,
              check_nan, buffers, deps, ready):
    """One step of :func:`run`: call ``node``'s hooks and backward (or accumulate a leaf's
    gradient), add its input gradients to the buffers and push the nodes that became ready."""
    if node._tensor_pre_hooks or node._retain_grad_hooks or node._pre_hooks:
        grad_outputs = _call_tensor_hooks(node, grad_outputs)

    if type(node) is AccumulateGrad:
        g = grad_outputs[0]
        if g is not None and node.variable._hooks:
            g = _call_leaf_hooks(node.variable, g)  # before capture: autograd.grad sees them too
        if captures is not None and node in captures:
            for cap in captures[node]:
                results[cap.index] = g
        if accumulate and (needed is None or node in needed):
            owned = (g is not None and not create_graph and not g._sparse
                     and sys.getrefcount(g) == 2 + (grad_outputs[0] is g) and _owns_array(g))
            _accumulate(node.variable, g, create_graph, owned)
        return

    if captures is not None and node in captures:
        for cap in captures[node]:
            results[cap.index] = grad_outputs[cap.output_nr]

    grad_inputs = None
    if needed is None or node in needed:
        for g in grad_outputs:
            if g is not None:
                if node._output_meta is None and node._post_hooks is None and not check_nan \
                        and node._trace is None:
                    grad_inputs = node.apply(grad_outputs)
                else:
                    grad_inputs = _call_node(node, grad_outputs, check_nan)
                break
    if not retain_graph:
        node._release_saved()

    i = -1
    n_grads = 0 if grad_inputs is None else len(grad_inputs)
    for nxt, nr in node.next_functions:
        i += 1
        if nxt is None:
            continue
        if i < n_grads:
            g = grad_inputs[i]
            if g is not None:
                buf = buffers.get(nxt)
                if buf is None:
                    buf = buffers[nxt] = [None] * nxt._num_outputs
                prev = buf[nr]
                buf[nr] = g if prev is None else (g + prev if g._sparse else prev + g)
        remaining = deps[nxt] - 1
        deps[nxt] = remaining
        if remaining == 0:
            heapq.heappush(ready, (-nxt._sequence_nr, nxt))


def _nodes_leading_to(captures, seen, roots):
    """The nodes from which some captured node can be reached (only those need to run)."""
    parents = {}
    for node in seen:
        for nxt, _ in node.next_functions:
            if nxt is not None:
                parents.setdefault(nxt, []).append(node)
    needed = set()
    stack = [n for n in captures if n in seen]
    needed.update(stack)
    while stack:
        node = stack.pop()
        for p in parents.get(node, ()):
            if p not in needed:
                needed.add(p)
                stack.append(p)
    return needed


def _add_to_buffer(buffers, node, nr, g):
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node._num_outputs
    prev = buf[nr]
    buf[nr] = g if prev is None else prev + g


def _call_tensor_hooks(node, grad_outputs):
    hooks = node._tensor_pre_hooks
    if hooks:
        for nr, registry in hooks.items():
            for hook in list(registry.values()):
                g = grad_outputs[nr]
                if g is None:
                    continue
                new = hook(g)
                if new is not None:
                    grad_outputs[nr] = new
    retain = node._retain_grad_hooks
    if retain:
        for nr, ref in retain.items():
            t = ref()
            g = grad_outputs[nr]
            if t is not None and g is not None:
                if t._grad is None:
                    t._grad = g.clone() if _GRAD_ENABLED.value else g._copy_detached()
                else:
                    t._grad = t._grad + g
    pre = node._pre_hooks
    if pre:
        for hook in list(pre.values()):
            new = hook(tuple(grad_outputs))
            if new is not None:
                grad_outputs = list(new)
    return grad_outputs


def _call_node(node, grad_outputs, check_nan):
    if node._output_meta is not None and any(g is None for g in grad_outputs):
        from ..ops.creation import zeros
        grad_outputs = [zeros(shape, dtype=dtype, device=dev) if g is None else g
                        for g, (shape, dtype, dev) in zip(grad_outputs, node._output_meta)]
    try:
        grad_inputs = node.apply(grad_outputs)
    except Exception:
        if node._trace is not None:
            _print_forward_trace(node)
        raise
    post = node._post_hooks
    if post:
        for hook in list(post.values()):
            new = hook(grad_inputs, tuple(grad_outputs))
            if new is not None:
                grad_inputs = tuple(new)
    if check_nan:
        for i, g in enumerate(grad_inputs):
            if g is not None and bool(_any_nan(g)):
                if node._trace is not None:
                    _print_forward_trace(node)
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    return grad_inputs


def _any_nan(t):
    xp = t._device.backend.xp
    return xp.isnan(t._data).any()


def _print_forward_trace(node):
    import sys
    import warnings
    warnings.warn(
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
        + "".join(node._trace), UserWarning, stacklevel=3)
    sys.stderr.flush()


def _call_leaf_hooks(variable, g):
    for hook in list(variable._hooks.values()):
        new = hook(g)
        if new is not None:
            g = new
    return g


def _owns_array(g):
    """Whether nothing but ``g`` references its array, which is no view and may be written."""
    arr = g._data
    return (sys.getrefcount(arr) == 3 and arr.base is None  # g's slot, ``arr`` and the call
            and getattr(arr.flags, "writeable", True) and not elements_share_memory(arr))


def _accumulate(variable, g, create_graph, owned=False):
    """AccumulateGrad: add ``g`` into ``variable.grad``, then post hooks (leaf hooks ran before).

    ``owned`` (computed by the engine from reference counts) says that no one else can see
    ``g`` or its array, so a first gradient is kept as it is instead of being copied."""
    if g is None:
        return
    if g._device is not variable._device:
        g = g.to(variable._device)
    target = variable._grad_dtype if variable._grad_dtype_set else variable._dtype
    if target is not None and g._dtype is not target:   # PyTorch casts a leaf's gradient to its grad_dtype
        g = g.to(target)
        owned = True
    old = variable._grad
    if old is None:
        if create_graph:
            # A differentiable copy: ``g`` may be shared with other leaves or be a read-only
            # broadcast view, and the leaf's .grad must be its own (zero_() etc. work on it).
            variable._grad = g.clone()
        elif owned and g._device is variable._device:
            variable._grad = g
        else:
            # A gradient tensor can be shared (e.g. both inputs of an add get the same one),
            # so the leaf gets its own copy that later in-place accumulation may modify.
            variable._grad = g._copy_detached()
    elif g._sparse:   # sparse + sparse, or dense + sparse: the sparse tensor's add knows both
        variable._grad = g + old
    elif create_graph or old._requires_grad or old._sparse:
        variable._grad = old + g
    else:
        old._data += g._data if g._dtype is old._dtype else g._data.astype(old._data.dtype)
        old._vc[0] += 1
    post = variable._post_acc_hooks
    if post:
        for hook in list(post.values()):
            hook(variable)


def queue_callback(callback):
    """Run ``callback()`` (no arguments) when the backward pass now running has executed its whole graph.

    Only valid while a backward pass runs (from a hook or a node); callbacks run in the order they were
    queued, before ``backward()`` returns. DistributedDataParallel finishes its gradient buckets here.
    """
    if not _CALLBACKS:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _CALLBACKS[-1].append(callback)


class ExecutionEngine:
    """``Variable._execution_engine``: the entry PyTorch code uses to queue end-of-backward callbacks."""

    queue_callback = staticmethod(queue_callback)


ENGINE = ExecutionEngine()
