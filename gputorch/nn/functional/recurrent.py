"""The math of the recurrent layers: one step of each cell, and one layer run over a sequence.

Gate layouts are PyTorch's: the rows of ``W_ih``/``W_hh`` stack the gates (LSTM ``i, f, g, o``;
GRU ``r, z, n``). The formulas follow PyTorch's order of operations::

    RNN   h' = act((h @ W_hh.T + b_hh) + (x @ W_ih.T + b_ih))
    LSTM  gates = (h @ W_hh.T + b_hh) + (x @ W_ih.T + b_ih)
          c' = f * c + i * g,  h' = o * tanh(c')  (then h' @ W_hr.T with a projection)
    GRU   r = sigma(hr + ir),  z = sigma(hz + iz),  n = tanh(in + hn * r),  h' = (h - n) * z + n

A layer computes the input projection of all time steps with one product and loops over time
for the hidden projection. The gate math of an LSTM or GRU step is one fused op each
(PyTorch's ``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell``): the forward keeps the gate
activations as a workspace, and the backward computes the gate gradients from it in one op, or,
when a graph of the backward is recorded (``create_graph=True``), with differentiable Tensor ops
that recompute the gates (as PyTorch does), so double backward works.
"""
from ... import _tracing
from ..._dispatch import apply
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.node import Node
from ...ops._common import quiet_errors, xp_of
from ...ops.shape import cat, stack
from .linear import linear

__all__ = []

_GRAD_ENABLED = grad_mode.GRAD_ENABLED


def _sigmoid_(xp, a):
    """``a <- 1 / (1 + exp(-a))`` in place (as the sigmoid op computes it)."""
    xp.negative(a, out=a)
    xp.exp(a, out=a)
    a += 1
    xp.reciprocal(a, out=a)
    return a


def _compute(t):
    """A tensor's array, half precision taken up to float32 (the fused math rounds once)."""
    a = t._data
    return a.astype("float32") if a.dtype.itemsize == 2 else a


def _gate_major(xp, a, gates):
    """``(N, gates * H)`` -> a contiguous ``(gates, N, H)`` copy: every gate's block is then
    contiguous, so the elementwise math below runs on whole blocks instead of strided columns."""
    n = a.shape[0]
    return xp.ascontiguousarray(a.reshape(n, gates, -1).transpose(1, 0, 2))


def _row_major(d, like):
    """``(gates, N, H)`` -> a new ``(N, gates * H)`` array in the dtype of ``like``."""
    return d.transpose(1, 0, 2).astype(like.dtype, order="C").reshape(d.shape[1], -1)


def _back(a, like):
    return a if a.dtype == like.dtype else a.astype(like.dtype)


# ------------------------------------------------------------------------ fused GRU step
class ThnnFusedGruCellBackward0(Node):
    """``h'`` of one GRU step from ``gi = x @ W_ih.T + b_ih``, ``gh = h @ W_hh.T + b_hh``
    (both ``(N, 3H)``) and ``h`` ``(N, H)``."""

    def forward(ctx, gi, gh, h):
        xp = xp_of(h)
        hx = _compute(h)
        a, b = _gate_major(xp, _compute(gi), 3), _gate_major(xp, _compute(gh), 3)
        with quiet_errors():
            rz = b[:2]
            rz += a[:2]
            _sigmoid_(xp, rz)                  # b now holds sigma(hr + ir), sigma(hz + iz), hn
            n = b[2] * rz[0]
            n += a[2]
            xp.tanh(n, out=n)
        out = hx - n
        out *= rz[1]
        out += n
        ctx.save_for_backward(gi, gh, h)
        ctx.workspace = (b, n)
        return _back(out, h._data)

    def backward(ctx, grad):
        gi, gh, h = ctx.saved_values
        if _GRAD_ENABLED.value:
            d_gi, d_gh, d_h = _gru_cell_grads(grad, gi, gh, h)
        else:
            d_gi, d_gh, d_h = apply(_GruCellGrads, grad, h, workspace=ctx.workspace)
        need = ctx.needs_input_grad
        return d_gi if need[0] else None, d_gh if need[1] else None, d_h if need[2] else None


class _GruCellGrads(Node):
    """The three input gradients of a fused GRU step, from its workspace (run without a graph)."""

    def forward(ctx, grad, h, workspace):
        (r, z, hn), n = workspace
        g, hx = _compute(grad), _compute(h)
        xp = xp_of(h)
        d = xp.empty((3,) + n.shape, dtype=n.dtype)
        d_r, d_z, d_n = d
        d_h = g * z
        xp.subtract(g, d_h, out=d_n)       # g * (1 - z)
        d_n *= 1 - n * n                   # through tanh
        xp.multiply(d_n, hn, out=d_r)
        d_r *= r
        d_r *= 1 - r                       # through sigmoid
        xp.subtract(hx, n, out=d_z)
        d_z *= g
        d_z *= z
        d_z *= 1 - z
        d_gi = _row_major(d, grad._data)
        d_n *= r
        return d_gi, _row_major(d, grad._data), _back(d_h, grad._data)


def _gru_cell_grads(grad, gi, gh, h):
    """The fused GRU step's input gradients as differentiable Tensor ops."""
    ir, iz, in_ = gi.chunk(3, 1)
    hr, hz, hn = gh.chunk(3, 1)
    r = (hr + ir).sigmoid()
    z = (hz + iz).sigmoid()
    n = (in_ + hn * r).tanh()
    d_h = grad * z
    d_n = (grad - d_h) * (1 - n * n)
    d_r = d_n * hn * r * (1 - r)
    d_z = grad * (h - n) * z * (1 - z)
    return cat([d_r, d_z, d_n], 1), cat([d_r, d_z, d_n * r], 1), d_h


def fused_gru_cell(gi, gh, h):
    """One GRU step from the gate pre-activations ``gi``, ``gh`` ``(N, 3H)`` and ``h`` ``(N, H)``."""
    return apply(ThnnFusedGruCellBackward0, gi, gh, h)


# ------------------------------------------------------------------------ fused LSTM step
class ThnnFusedLstmCellBackward0(Node):
    """``(h', c')`` of one LSTM step from ``gi``, ``gh`` (both ``(N, 4H)``) and ``c`` ``(N, H)``."""

    def forward(ctx, gi, gh, c):
        xp = xp_of(c)
        cx = _compute(c)
        gates = _compute(gh) + _compute(gi)
        gates = _gate_major(xp, gates, 4)
        with quiet_errors():
            g = xp.tanh(gates[2])
            _sigmoid_(xp, gates)               # i, f, o (the g block is replaced below)
            gates[2] = g
            i, f, _, o = gates
            cy = f * cx
            cy += i * g
            tc = xp.tanh(cy)
        hy = o * tc
        ctx.save_for_backward(gi, gh, c)
        ctx.workspace = (gates, tc)
        return _back(hy, c._data), _back(cy, c._data)

    def backward(ctx, grad_h, grad_c):
        gi, gh, c = ctx.saved_values
        if _GRAD_ENABLED.value:
            d_gates, d_c = _lstm_cell_grads(grad_h, grad_c, gi, gh, c)
        else:
            d_gates, d_c = apply(_LstmCellGrads, grad_h, grad_c, c, workspace=ctx.workspace)
        need = ctx.needs_input_grad
        return d_gates if need[0] else None, d_gates if need[1] else None, d_c if need[2] else None


class _LstmCellGrads(Node):
    """The gate and cell-state gradients of a fused LSTM step, from its workspace (no graph)."""

    def forward(ctx, grad_h, grad_c, c, workspace):
        (i, f, g, o), tc = workspace
        gh_, gc, cx = _compute(grad_h), _compute(grad_c), _compute(c)
        xp = xp_of(c)
        d_cy = gh_ * o
        d_cy *= 1 - tc * tc
        d_cy += gc
        d = xp.empty((4,) + cx.shape, dtype=tc.dtype)
        d_i, d_f, d_g, d_o = d
        xp.multiply(d_cy, g, out=d_i)
        d_i *= i
        d_i *= 1 - i
        xp.multiply(d_cy, cx, out=d_f)
        d_f *= f
        d_f *= 1 - f
        xp.multiply(d_cy, i, out=d_g)
        d_g *= 1 - g * g
        xp.multiply(gh_, tc, out=d_o)
        d_o *= o
        d_o *= 1 - o
        d_cy *= f
        return _row_major(d, grad_h._data), _back(d_cy, grad_h._data)


def _lstm_cell_grads(grad_h, grad_c, gi, gh, c):
    """The fused LSTM step's gate and cell gradients as differentiable Tensor ops."""
    i, f, g, o = (gh + gi).chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    tc = (f * c + i * g).tanh()
    d_cy = grad_h * o * (1 - tc * tc) + grad_c
    d_gates = cat([d_cy * g * i * (1 - i), d_cy * c * f * (1 - f), d_cy * i * (1 - g * g),
                   grad_h * tc * o * (1 - o)], 1)
    return d_gates, d_cy * f


def fused_lstm_cell(gi, gh, c):
    """One LSTM step from the gate pre-activations ``gi``, ``gh`` ``(N, 4H)`` and ``c``;
    returns ``(h', c')``."""
    return apply(ThnnFusedLstmCellBackward0, gi, gh, c)


# ------------------------------------------------------------------------ one step of each cell
def rnn_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None, nonlinearity="tanh"):
    """``act(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh)`` for ``(N, in)`` inputs, ``(N, H)`` states."""
    pre = linear(hx, w_hh, b_hh) + linear(input, w_ih, b_ih)
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step; ``hx = (h, c)``; returns ``(h', c')``."""
    return fused_lstm_cell(linear(input, w_ih, b_ih), linear(hx[0], w_hh, b_hh), hx[1])


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step; returns ``h'``."""
    return fused_gru_cell(linear(input, w_ih, b_ih), linear(hx, w_hh, b_hh), hx)


# ------------------------------------------------------------------------ one layer, one direction
def _step(mode, gi, state, w_hh, b_hh, w_hr):
    """One time step from the input projection ``gi`` ``(N, gates * H)`` and the state tuple
    (``(h,)``, or ``(h, c)`` for an LSTM); returns the new state tuple (its ``h`` is the output)."""
    h = state[0]
    if mode == "GRU":
        return (apply(ThnnFusedGruCellBackward0, gi, linear(h, w_hh, b_hh), h),)
    if mode == "LSTM":
        h, c = apply(ThnnFusedLstmCellBackward0, gi, linear(h, w_hh, b_hh), state[1])
        return (h if w_hr is None else linear(h, w_hr), c)
    pre = linear(h, w_hh, b_hh) + gi
    return (pre.relu() if mode == "RNN_RELU" else pre.tanh(),)


def recurrent_layer(mode, input, state, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None, reverse=False):
    """Run one direction of one layer over a time-major ``input`` ``(T, N, in)``.

    ``mode`` is ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``; ``state`` the tuple of
    initial states (``(h,)``, or ``(h, c)`` for an LSTM), each ``(N, size)``; ``reverse`` runs
    from the last step to the first. Returns the outputs ``(T, N, H_out)`` (in input order) and
    the tuple of final states.
    """
    gi = linear(input, w_ih, b_ih)
    if len(gi) == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    if mode == "LSTM" and w_hr is None:
        from .recurrent_sequence import lstm_sequence
        return lstm_sequence(gi, state[0], state[1], w_hh, b_hh, reverse)
    if mode == "GRU":
        from .recurrent_sequence import gru_sequence
        return gru_sequence(gi, state[0], w_hh, b_hh, reverse)
    if mode != "LSTM" and _tracing.STATE.graph is not None:     # one op, whatever the traced length
        from .recurrent_sequence import rnn_sequence
        return rnn_sequence(gi, state[0], w_hh, b_hh, reverse, mode == "RNN_RELU")
    outputs = recurrent_steps(mode, gi, state, w_hh, b_hh, w_hr, reverse)
    return outputs[0], tuple(outputs[1:])


def run_order(steps, reverse):
    """The time steps in the order a layer runs them: last to first when ``reverse``."""
    return range(steps - 1, -1, -1) if reverse else range(steps)


def recurrent_steps(mode, gi, state, w_hh, b_hh, w_hr, reverse):
    """``(outputs (T, N, H_out), *final states)`` of one layer from its input projection ``gi``
    ``(T, N, gates * H)``, one differentiable step op after another."""
    steps = len(gi)
    order = run_order(steps, reverse)
    outputs = [None] * steps
    gis = gi.unbind(0)
    for t in order:
        state = _step(mode, gis[t], state, w_hh, b_hh, w_hr)
        outputs[t] = state[0]
    return (stack(outputs, 0),) + tuple(state)


def packed_recurrent_layer(mode, data, batch_sizes, state, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None,
                           reverse=False):
    """Run one direction of one layer over packed sequences.

    ``data`` ``(sum(batch_sizes), in)`` holds step ``t``'s ``batch_sizes[t]`` rows after those of
    the earlier steps (a PackedSequence's data; ``batch_sizes`` a list of non-increasing ints);
    ``state`` the tuple of initial states, each ``(batch_sizes[0], size)``. Each sequence runs
    over its own steps only, so its final state is taken at its own last step (the first step
    when ``reverse``). Returns the packed outputs ``(sum(batch_sizes), H_out)`` and the tuple of
    final states.
    """
    gi = linear(data, w_ih, b_ih)
    starts = [0]
    for size in batch_sizes:
        starts.append(starts[-1] + size)
    outputs = [None] * len(batch_sizes)
    if reverse:
        initial = state
        rows = batch_sizes[-1]
        state = tuple(s[:rows] for s in initial)
        for t in range(len(batch_sizes) - 1, -1, -1):
            size = batch_sizes[t]
            if size > rows:  # longer sequences join at their own last step, from their initial state
                state = tuple(cat([s, s0[rows:size]], 0) for s, s0 in zip(state, initial))
                rows = size
            state = _step(mode, gi[starts[t]:starts[t + 1]], state, w_hh, b_hh, w_hr)
            outputs[t] = state[0]
        return cat(outputs, 0), state
    finished = []  # final states of the sequences that ended, the shortest first
    rows = batch_sizes[0]
    for t, size in enumerate(batch_sizes):
        if size < rows:
            finished.append(tuple(s[size:] for s in state))
            state = tuple(s[:size] for s in state)
            rows = size
        state = _step(mode, gi[starts[t]:starts[t + 1]], state, w_hh, b_hh, w_hr)
        outputs[t] = state[0]
    if not finished:
        return cat(outputs, 0), state
    finished.append(state)
    final = tuple(cat([part[k] for part in reversed(finished)], 0) for k in range(len(state)))
    return cat(outputs, 0), final


# ------------------------------------------------------------------------ every layer and direction
def run_layers(mode, input, states, weights, *, has_biases, num_layers, dropout, train, bidirectional,
               batch_first=False, batch_sizes=None):
    """Run a stack of recurrent layers: ``input`` time-major ``(T, N, in)`` (``(N, T, in)`` with
    ``batch_first``), or the 2-d data of a packed sequence with its ``batch_sizes`` list.

    ``states`` is the tuple of initial states (``(h,)``, or ``(h, c)`` for an LSTM), each
    ``(num_layers * directions, N, size)``; ``weights`` the flat list of PyTorch's order: per
    layer and direction ``w_ih, w_hh``, then ``b_ih, b_hh`` when ``has_biases``, then ``w_hr``
    for an LSTM with projections (told by the length of the list). Dropout (training only) acts
    on the input of every layer but the first. Returns the output and the tuple of final states.
    """
    directions = 2 if bidirectional else 1
    count = num_layers * directions
    per = 2 + (2 if has_biases else 0)
    if len(weights) == count * (per + 1) and mode == "LSTM":
        per += 1
    elif len(weights) != count * per:
        raise RuntimeError(f"the number of weights does not match: expected {count * per} tensors for {num_layers} "
                           f"layer(s) and {directions} direction(s), got {len(weights)}")
    proj = per in (3, 5)
    dropout = dropout if train else 0.0
    swap_batch_time = batch_first and batch_sizes is None   # packed data is time-major already
    layer_input = input.transpose(0, 1) if swap_batch_time else input
    initial = [s.unbind(0) for s in states]
    finals = [[] for _ in states]
    for layer in range(num_layers):
        if layer > 0 and dropout > 0:
            from .dropout import dropout as _dropout
            layer_input = _dropout(layer_input, dropout, True)
        outputs = []
        for direction in range(directions):
            idx = layer * directions + direction
            w = weights[idx * per:(idx + 1) * per]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            w_hr = w[-1] if proj else None
            start = tuple(s[idx] for s in initial)
            if batch_sizes is None:
                out, end = recurrent_layer(mode, layer_input, start, w[0], w[1], b_ih, b_hh, w_hr,
                                           reverse=direction == 1)
            else:
                out, end = packed_recurrent_layer(mode, layer_input, batch_sizes, start, w[0], w[1], b_ih, b_hh,
                                                  w_hr, reverse=direction == 1)
            outputs.append(out)
            for k, e in enumerate(end):
                finals[k].append(e)
        layer_input = outputs[0] if directions == 1 else cat(outputs, -1)
    output = layer_input.transpose(0, 1) if swap_batch_time else layer_input
    return output, tuple(stack(f, 0) for f in finals)


def batch_size_list(batch_sizes):
    """A packed sequence's ``batch_sizes`` (a tensor or a sequence) as a list of ints."""
    if isinstance(batch_sizes, Tensor):
        return [int(v) for v in batch_sizes.tolist()]
    return [int(v) for v in batch_sizes]
