"""One LSTM or GRU layer over a whole sequence as a single op (PyTorch's CPU layers are loops of
fused cells; cuDNN's are one op like this).

Forward: for each time step, ``gates = (h @ W_hh.T + b_hh) + gi[t]`` (``gi`` the input projection
of every step, computed before with one product) and the fused cell math of
``recurrent.ThnnFusedLstmCellBackward0`` (same operations in the same order, so the values are
identical; a GRU step is ``recurrent.ThnnFusedGruCellBackward0``'s). The gate activations, cell
states and hidden states of every step are kept as one workspace. Backward runs the steps in reverse with one small product per step (``d_gates @
W_hh`` for the previous hidden state) and computes the weight gradient of all steps with one
product ``d_gates.T @ h_prev`` at the end, instead of a product and an accumulation per step.

Under ``create_graph=True`` the backward recomputes the layer with the per-step differentiable
ops and differentiates that, so double backward works.
"""
from ..._dispatch import apply
from ...autograd import grad_mode
from ...autograd.engine import grad as autograd_grad
from ...autograd.node import Node
from ...ops._common import quiet_errors, xp_of
from ...ops._gemm import product
from .recurrent import _back, _compute, _gate_major, _sigmoid_, run_order

__all__ = []

_GRAD_ENABLED = grad_mode.GRAD_ENABLED


class LstmSequenceBackward0(Node):
    """``(outputs (T, N, H), h_T, c_T)`` of one LSTM layer (no projection) from ``gi (T, N, 4H)``,
    ``h0``, ``c0`` ``(N, H)``, ``W_hh (4H, H)`` and ``b_hh (4H,)`` (or None); ``reverse`` runs the
    steps from last to first (the outputs stay in input order)."""

    def forward(ctx, gi, h0, c0, w_hh, b_hh, reverse):
        xp = xp_of(h0)
        x_in = _compute(gi)
        steps, n, four_h = x_in.shape
        size = four_h // 4
        w = _compute(w_hh).T
        bias = None if b_hh is None else _compute(b_hh)
        work = x_in.dtype
        acts = xp.empty((steps, 4, n, size), work)      # i, f, g, o of every step
        cells = xp.empty((steps + 1, n, size), work)     # c before each step, then c_T (in run order)
        hiddens = xp.empty((steps + 1, n, size), work)   # h before each step, then h_T (in run order)
        hiddens[0] = _compute(h0)
        cells[0] = _compute(c0)
        order = run_order(steps, reverse)
        with quiet_errors():
            for k, t in enumerate(order):
                gates = product(hiddens[k], w)
                if bias is not None:
                    gates += bias
                gates += x_in[t]
                gates = _gate_major(xp, gates, 4)
                g = xp.tanh(gates[2])
                _sigmoid_(xp, gates)
                gates[2] = g
                i, f, _, o = gates
                acts[k] = gates
                cy = cells[k + 1]
                xp.multiply(f, cells[k], out=cy)
                cy += i * g
                xp.multiply(o, xp.tanh(cy), out=hiddens[k + 1])
        out = _in_input_order(hiddens[1:], reverse)
        ctx.save_for_backward(gi, h0, c0, w_hh, b_hh)
        ctx.workspace = (acts, cells, hiddens)
        ctx.reverse = reverse
        like = h0._data
        return _back(out, like), _back(hiddens[-1].copy(), like), _back(cells[-1].copy(), like)

    def backward(ctx, grad_out, grad_h, grad_c):
        gi, h0, c0, w_hh, b_hh = ctx.saved_values
        if _GRAD_ENABLED.value:
            return _differentiable_grads(ctx, (grad_out, grad_h, grad_c), gi, h0, c0, w_hh, b_hh)
        d_gi, d_h0, d_c0, d_w, d_b = apply(_LstmSequenceGrads, grad_out, grad_h, grad_c, w_hh,
                                           workspace=ctx.workspace, reverse=ctx.reverse, has_bias=b_hh is not None)
        grads = (d_gi, d_h0, d_c0, d_w, d_b if b_hh is not None else None)
        return tuple(g if need else None for g, need in zip(grads, ctx.needs_input_grad))


class _LstmSequenceGrads(Node):
    """The gradients of :class:`LstmSequenceBackward0` from its workspace (no graph)."""

    def forward(ctx, grad_out, grad_h, grad_c, w_hh, workspace, reverse, has_bias):
        acts, cells, hiddens = workspace
        xp = xp_of(w_hh)
        steps, _, n, size = acts.shape
        work = acts.dtype
        w = _compute(w_hh)
        g_out = _compute(grad_out)
        dh = xp.zeros((n, size), work) if grad_h is None else _compute(grad_h).astype(work, copy=True)
        dc = xp.zeros((n, size), work) if grad_c is None else _compute(grad_c).astype(work, copy=True)
        d_gates = xp.empty((steps, 4, n, size), work)
        order = run_order(steps, reverse)
        with quiet_errors():
            for k in range(steps - 1, -1, -1):
                dh += g_out[order[k]]
                i, f, g, o = acts[k]
                tc = xp.tanh(cells[k + 1])
                d_i, d_f, d_g, d_o = d_gates[k]
                xp.multiply(dh, tc, out=d_o)
                d_o *= o
                d_o *= 1 - o
                dc += dh * o * (1 - tc * tc)
                xp.multiply(dc, g, out=d_i)
                d_i *= i
                d_i *= 1 - i
                xp.multiply(dc, cells[k], out=d_f)
                d_f *= f
                d_f *= 1 - f
                xp.multiply(dc, i, out=d_g)
                d_g *= 1 - g * g
                dc *= f
                rows = d_gates[k].transpose(1, 0, 2).reshape(n, 4 * size)
                dh = product(rows, w)
        flat = _row_major_steps(xp, d_gates)
        d_w, d_b = _recurrent_weight_grads(xp, flat, hiddens, has_bias)
        like = w_hh._data
        return (_back(_in_input_order(flat, reverse), like), _back(dh, like), _back(dc, like), _back(d_w, like),
                _back(d_b, like))


class GruSequenceBackward0(Node):
    """``(outputs (T, N, H), h_T)`` of one GRU layer from ``gi (T, N, 3H)``, ``h0 (N, H)``,
    ``W_hh (3H, H)`` and ``b_hh (3H,)`` (or None); ``reverse`` as for the LSTM."""

    def forward(ctx, gi, h0, w_hh, b_hh, reverse):
        xp = xp_of(h0)
        x_in = _compute(gi)
        steps, n, three_h = x_in.shape
        size = three_h // 3
        w = _compute(w_hh).T
        bias = None if b_hh is None else _compute(b_hh)
        work = x_in.dtype
        gates = xp.empty((steps, 3, n, size), work)      # r, z and the hidden part hn of every step
        news = xp.empty((steps, n, size), work)          # n of every step
        hiddens = xp.empty((steps + 1, n, size), work)   # h before each step, then h_T (in run order)
        hiddens[0] = _compute(h0)
        order = run_order(steps, reverse)
        with quiet_errors():
            for k, t in enumerate(order):
                gh = product(hiddens[k], w)
                if bias is not None:
                    gh += bias
                b = _gate_major(xp, gh, 3)
                a = _gate_major(xp, x_in[t], 3)
                rz = b[:2]
                rz += a[:2]
                _sigmoid_(xp, rz)
                new = news[k]
                xp.multiply(b[2], rz[0], out=new)
                new += a[2]
                xp.tanh(new, out=new)
                gates[k] = b
                out = hiddens[k + 1]
                xp.subtract(hiddens[k], new, out=out)
                out *= rz[1]
                out += new
        out = _in_input_order(hiddens[1:], reverse)
        ctx.save_for_backward(gi, h0, w_hh, b_hh)
        ctx.workspace = (gates, news, hiddens)
        ctx.reverse = reverse
        like = h0._data
        return _back(out, like), _back(hiddens[-1].copy(), like)

    def backward(ctx, grad_out, grad_h):
        gi, h0, w_hh, b_hh = ctx.saved_values
        if _GRAD_ENABLED.value:
            return _differentiable_grads(ctx, (grad_out, grad_h), gi, h0, None, w_hh, b_hh, "GRU")
        d_gi, d_h0, d_w, d_b = apply(_GruSequenceGrads, grad_out, grad_h, w_hh, workspace=ctx.workspace,
                                     reverse=ctx.reverse, has_bias=b_hh is not None)
        grads = (d_gi, d_h0, d_w, d_b if b_hh is not None else None)
        return tuple(g if need else None for g, need in zip(grads, ctx.needs_input_grad))


class _GruSequenceGrads(Node):
    """The gradients of :class:`GruSequenceBackward0` from its workspace (no graph)."""

    def forward(ctx, grad_out, grad_h, w_hh, workspace, reverse, has_bias):
        gates, news, hiddens = workspace
        xp = xp_of(w_hh)
        steps, _, n, size = gates.shape
        work = gates.dtype
        w = _compute(w_hh)
        g_out = _compute(grad_out)
        dh = xp.zeros((n, size), work) if grad_h is None else _compute(grad_h).astype(work, copy=True)
        d_gi_all = xp.empty((steps, 3, n, size), work)
        d_gh_all = xp.empty((steps, 3, n, size), work)
        order = run_order(steps, reverse)
        with quiet_errors():
            for k in range(steps - 1, -1, -1):
                dh += g_out[order[k]]
                r, z, hn = gates[k]
                new = news[k]
                d_r, d_z, d_n = d_gi_all[k]
                d_h = dh * z
                xp.subtract(dh, d_h, out=d_n)
                d_n *= 1 - new * new
                xp.multiply(d_n, hn, out=d_r)
                d_r *= r
                d_r *= 1 - r
                xp.subtract(hiddens[k], new, out=d_z)
                d_z *= dh
                d_z *= z
                d_z *= 1 - z
                d_gh = d_gh_all[k]
                d_gh[:2] = d_gi_all[k][:2]
                xp.multiply(d_n, r, out=d_gh[2])
                rows = d_gh.transpose(1, 0, 2).reshape(n, 3 * size)
                dh = d_h + product(rows, w)
        d_w, d_b = _recurrent_weight_grads(xp, _row_major_steps(xp, d_gh_all), hiddens, has_bias)
        like = w_hh._data
        d_gi = _in_input_order(_row_major_steps(xp, d_gi_all), reverse)
        return _back(d_gi, like), _back(dh, like), _back(d_w, like), _back(d_b, like)


class RnnSequenceBackward0(Node):
    """``(outputs (T, N, H), h_T)`` of one plain (Elman) RNN layer, ``h' = act(h @ W_hh.T + b_hh + gi[t])``
    with ``act`` tanh or relu, from ``gi (T, N, H)``, ``h0 (N, H)``, ``W_hh (H, H)`` and ``b_hh (H,)``
    (or None); ``reverse`` as for the LSTM. Used while a trace records, so that the layer is one op
    (ONNX's ``RNN``) whatever the sequence length; its backward recomputes the layer with the
    per-step ops and differentiates that."""

    def forward(ctx, gi, h0, w_hh, b_hh, reverse, relu):
        xp = xp_of(h0)
        x_in = _compute(gi)
        steps, n, size = x_in.shape
        w = _compute(w_hh).T
        bias = None if b_hh is None else _compute(b_hh)
        hiddens = xp.empty((steps + 1, n, size), x_in.dtype)   # h before each step, then h_T (run order)
        hiddens[0] = _compute(h0)
        with quiet_errors():
            for k, t in enumerate(run_order(steps, reverse)):
                pre = product(hiddens[k], w)
                if bias is not None:
                    pre += bias
                pre += x_in[t]
                if relu:
                    xp.maximum(pre, 0, out=hiddens[k + 1])
                else:
                    xp.tanh(pre, out=hiddens[k + 1])
        ctx.save_for_backward(gi, h0, w_hh, b_hh)
        ctx.reverse, ctx.mode = reverse, "RNN_RELU" if relu else "RNN_TANH"
        like = h0._data
        return _back(_in_input_order(hiddens[1:], reverse), like), _back(hiddens[-1].copy(), like)

    def backward(ctx, grad_out, grad_h):
        gi, h0, w_hh, b_hh = ctx.saved_values
        if _GRAD_ENABLED.value:             # create_graph: the gradients keep their graph
            return _differentiable_grads(ctx, (grad_out, grad_h), gi, h0, None, w_hh, b_hh, ctx.mode)
        with grad_mode.enable_grad():
            grads = _differentiable_grads(ctx, (grad_out, grad_h), gi, h0, None, w_hh, b_hh, ctx.mode)
        return tuple(None if g is None else g.detach() for g in grads)


def _in_input_order(per_step, reverse):
    """Per-step arrays kept in run order, as a contiguous array in input order."""
    return (per_step[::-1] if reverse else per_step).copy()


def _row_major_steps(xp, gate_major):
    """``(T, gates, N, H)`` gate-major per-step gradients as ``(T, N, gates * H)`` rows."""
    steps, gates, n, size = gate_major.shape
    return xp.ascontiguousarray(gate_major.transpose(0, 2, 1, 3)).reshape(steps, n, gates * size)


def _recurrent_weight_grads(xp, d_gates, hiddens, has_bias):
    """The gradients of ``W_hh`` (one product over every step) and of ``b_hh`` (empty without a bias),
    from the gate gradients ``(T, N, G)`` and the hidden state before each step."""
    steps, n, width = d_gates.shape
    flat = d_gates.reshape(steps * n, width)
    d_w = product(flat.T, hiddens[:-1].reshape(steps * n, -1))
    return d_w, flat.sum(0) if has_bias else xp.zeros(0, d_gates.dtype)


def _differentiable_grads(ctx, grads, gi, h0, c0, w_hh, b_hh, mode="LSTM"):
    """The layer's gradients as a graph: recompute it with the per-step ops and differentiate."""
    from .recurrent import recurrent_steps
    state = (h0, c0) if mode == "LSTM" else (h0,)
    outputs = recurrent_steps(mode, gi, state, w_hh, b_hh, None, ctx.reverse)
    candidates = (gi, h0, c0, w_hh, b_hh) if mode == "LSTM" else (gi, h0, w_hh, b_hh)
    wanted = [k for k, t in enumerate(candidates) if t is not None and t.requires_grad and ctx.needs_input_grad[k]]
    pairs = [(o, g) for o, g in zip(outputs, grads) if g is not None]
    found = autograd_grad([o for o, _ in pairs], [candidates[k] for k in wanted], [g for _, g in pairs],
                          create_graph=True, allow_unused=True)
    result = [None] * len(candidates)
    for k, g in zip(wanted, found):
        result[k] = g
    return tuple(result)


def lstm_sequence(gi, h0, c0, w_hh, b_hh, reverse):
    """``(outputs, (h_T, c_T))`` of one LSTM layer over the input projection ``gi``."""
    out, h, c = apply(LstmSequenceBackward0, gi, h0, c0, w_hh, b_hh, reverse)
    return out, (h, c)


def gru_sequence(gi, h0, w_hh, b_hh, reverse):
    """``(outputs, (h_T,))`` of one GRU layer over the input projection ``gi``."""
    out, h = apply(GruSequenceBackward0, gi, h0, w_hh, b_hh, reverse)
    return out, (h,)


def rnn_sequence(gi, h0, w_hh, b_hh, reverse, relu):
    """``(outputs, (h_T,))`` of one plain RNN layer (tanh, or relu) over the input projection ``gi``."""
    out, h = apply(RnnSequenceBackward0, gi, h0, w_hh, b_hh, reverse, relu)
    return out, (h,)
