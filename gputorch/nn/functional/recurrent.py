"""The math of the recurrent layers: one step of each cell, and one layer run over a sequence.

Gate layouts are PyTorch's: the rows of ``W_ih``/``W_hh`` stack the gates (LSTM ``i, f, g, o``;
GRU ``r, z, n``). The formulas follow PyTorch's CPU order of operations::

    RNN   h' = act((h @ W_hh.T + b_hh) + (x @ W_ih.T + b_ih))
    LSTM  gates = (h @ W_hh.T + b_hh) + (x @ W_ih.T + b_ih)
          c' = f * c + i * g,  h' = o * tanh(c')  (then h' @ W_hr.T with a projection)
    GRU   r = sigma(hr + ir),  z = sigma(hz + iz),  n = tanh(in + hn * r),  h' = (h - n) * z + n

A layer computes the input projection of all time steps with one product and loops over time
for the hidden projection. Everything here is composed of differentiable ops.
"""
from ...ops.shape import stack
from .linear import linear

__all__ = []


# ------------------------------------------------------------------------ one step of each cell
def rnn_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None, nonlinearity="tanh"):
    """``act(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh)`` for ``(N, in)`` inputs, ``(N, H)`` states."""
    pre = linear(hx, w_hh, b_hh) + linear(input, w_ih, b_ih)
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step; ``hx = (h, c)``; returns ``(h', c')``."""
    return _lstm_step(linear(input, w_ih, b_ih), hx[0], hx[1], w_hh, b_hh, None)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step; returns ``h'``."""
    ir, iz, in_ = linear(input, w_ih, b_ih).chunk(3, 1)
    return _gru_step(ir, iz, in_, hx, w_hh, b_hh)


def _lstm_step(gi, h, c, w_hh, b_hh, w_hr):
    i, f, g, o = (linear(h, w_hh, b_hh) + gi).chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = linear(h, w_hr)
    return h, c


def _gru_step(ir, iz, in_, h, w_hh, b_hh):
    hr, hz, hn = linear(h, w_hh, b_hh).chunk(3, 1)
    r = (hr + ir).sigmoid()
    z = (hz + iz).sigmoid()
    n = (in_ + hn * r).tanh()
    return (h - n) * z + n


# ------------------------------------------------------------------------ one layer, one direction
def recurrent_layer(mode, input, state, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None, reverse=False):
    """Run one direction of one layer over a time-major ``input`` ``(T, N, in)``.

    ``mode`` is ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``; ``state`` the tuple of
    initial states (``(h,)``, or ``(h, c)`` for an LSTM), each ``(N, size)``; ``reverse`` runs
    from the last step to the first. Returns the outputs ``(T, N, H_out)`` (in input order) and
    the tuple of final states.
    """
    gi = linear(input, w_ih, b_ih)
    steps = len(gi)
    if steps == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    outputs = [None] * steps
    if mode == "GRU":
        ir, iz, in_ = (g.unbind(0) for g in gi.chunk(3, 2))
        h = state[0]
        for t in order:
            h = _gru_step(ir[t], iz[t], in_[t], h, w_hh, b_hh)
            outputs[t] = h
        final = (h,)
    elif mode == "LSTM":
        gis = gi.unbind(0)
        h, c = state
        for t in order:
            h, c = _lstm_step(gis[t], h, c, w_hh, b_hh, w_hr)
            outputs[t] = h
        final = (h, c)
    else:
        gis = gi.unbind(0)
        h = state[0]
        relu = mode == "RNN_RELU"
        for t in order:
            pre = linear(h, w_hh, b_hh) + gis[t]
            h = pre.relu() if relu else pre.tanh()
            outputs[t] = h
        final = (h,)
    return stack(outputs, 0), final
