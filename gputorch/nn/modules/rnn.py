"""Recurrent layers: RNN (tanh/relu), LSTM (optional projection), GRU, and their one-step cells.

Parameter names, shapes, gate order (LSTM ``i, f, g, o``; GRU ``r, z, n``), initialisation
(U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for every weight and bias) and the shapes of
inputs, initial states and outputs are PyTorch's, so state dicts interchange with it.

How a layer runs: the input projection ``x @ W_ih.T + b_ih`` of a whole sequence is one
product; the loop over time then adds the hidden projection ``h @ W_hh.T + b_hh`` and applies
the gate math of one step (``nn.functional.recurrent``). Everything is built from ops with
backward rules, so autograd gives gradients (and double backward) of the whole recurrence.

RNN, LSTM and GRU also take a ``PackedSequence`` (``nn.utils.rnn``) and then return one: each
sequence runs over its own steps only, and the final states are taken at each sequence's own
last step, in the batch order of the packed input (``unsorted_indices`` applied).
"""
import math
import numbers
import warnings

from ..._tensor import Tensor
from ...ops.creation import empty, zeros
from .. import init
from ..functional import recurrent as R
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _check_int(name, value):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be greater than zero")


class RNNBase(Module):
    """Shared machinery of RNN, LSTM and GRU: the parameters of every layer and direction,
    argument checks, and the run over layers, directions and time.

    Parameters of layer ``k`` (``_reverse`` appended for the backward direction):
    ``weight_ih_l{k}`` ``(gates * hidden_size, in)`` with ``in = input_size`` for ``k = 0`` and
    ``num_directions * out_size`` above, ``weight_hh_l{k}`` ``(gates * hidden_size, out_size)``,
    ``bias_ih_l{k}``/``bias_hh_l{k}`` ``(gates * hidden_size)`` (with ``bias=True``) and, for an
    LSTM with ``proj_size > 0``, ``weight_hr_l{k}`` ``(proj_size, hidden_size)``. ``out_size`` is
    ``proj_size`` if set, else ``hidden_size``.
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        _check_int("input_size", input_size)
        _check_int("hidden_size", hidden_size)
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size

        factory = {"device": device, "dtype": dtype}
        gate_size = _GATES[mode] * hidden_size
        out_size = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_in = input_size if layer == 0 else out_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_in)), ("weight_hh", (gate_size, out_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for stem, shape in shapes:
                    setattr(self, stem + suffix, Parameter(empty(shape, **factory)))
                    names.append(stem + suffix)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    # -- parameters ----------------------------------------------------------------
    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """PyTorch packs weights for cuDNN here; parameters are used as they are, so nothing to do."""

    @property
    def _flat_weights(self):
        params = self._parameters
        return [params.get(name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters of each (layer, direction), in PyTorch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if "proj_size" not in state:
            self.proj_size = 0

    # -- argument checks (PyTorch's messages) -------------------------------------------
    def check_input(self, input, batch_sizes=None):
        weight = self._parameters[self._flat_weights_names[0]]
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). "
                             f"Convert input: input.to({weight.dtype}), or convert model: model.to({input.dtype})")
        expected_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes=None):
        mini_batch = _mini_batch(self, input, batch_sizes)
        directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(tuple(expected_hidden_size), list(hx.shape)))

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # -- the run ------------------------------------------------------------------------
    def _prepare(self, input, hx, name, tensor_word):
        """Batch an unbatched input (and its state), check dims; returns (input, hx, is_batched)."""
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: expected input to be a Tensor, got {type(input).__name__}")
        ndim = input.dim()
        if ndim not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {ndim}D{tensor_word} instead")
        is_batched = ndim == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        return input, is_batched

    def _zeros(self, input, size):
        batch = input.size(0) if self.batch_first else input.size(1)
        directions = 2 if self.bidirectional else 1
        return zeros((self.num_layers * directions, batch, size), dtype=input.dtype, device=input.device)

    def _run(self, input, states, batch_sizes=None):
        """Run every layer and direction over ``input`` (time-major or batch-first, 3-D; or the
        2-D data of a packed sequence with its ``batch_sizes`` list) from the initial ``states``
        (a tuple of ``(layers * directions, batch, size)`` tensors).
        Returns the output and the tuple of final states."""
        weights = [self._parameters[n] for names in self._all_weights for n in names]
        return R.run_layers(self.mode, input, states, weights, has_biases=self.bias, num_layers=self.num_layers,
                            dropout=self.dropout, train=self.training, bidirectional=self.bidirectional,
                            batch_first=self.batch_first, batch_sizes=batch_sizes)

    def _run_packed(self, packed, hx, sizes):
        """Run over a PackedSequence from ``hx`` (in the packed batch's original order; None:
        zeros of the state ``sizes``). Returns the packed output and the final state (a tensor,
        or the tuple ``(h_n, c_n)`` for an LSTM), in the original batch order."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        if hx is None:
            batch = int(batch_sizes[0])
            directions = 2 if self.bidirectional else 1
            hx = tuple(zeros((self.num_layers * directions, batch, size), dtype=data.dtype, device=data.device)
                       for size in sizes)
            hx = hx if len(sizes) > 1 else hx[0]
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(data, hx, batch_sizes)
        output, finals = self._run(data, hx if isinstance(hx, tuple) else (hx,), batch_sizes.tolist())
        finals = finals if len(finals) > 1 else finals[0]
        return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
            self.permute_hidden(finals, unsorted_indices)


class RNN(RNNBase):
    """Elman RNN: ``h_t = act(x_t @ W_ih.T + b_ih + h_{t-1} @ W_hh.T + b_hh)``, ``act`` tanh or relu.

    Args: ``input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, device=None, dtype=None``.

    Shapes: input ``(L, N, H_in)`` (``(N, L, H_in)`` with ``batch_first``) or unbatched ``(L, H_in)``;
    ``h_0`` ``(D * num_layers, N, H_out)`` or ``(D * num_layers, H_out)``. Returns ``(output, h_n)``
    with output ``(L, N, D * H_out)`` and ``h_n`` shaped like ``h_0``.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if self.nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(modes[self.nonlinearity], *args, **kwargs)

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._run_packed(input, hx, (self.hidden_size,))
        input, is_batched = self._prepare(input, hx, "RNN", " tensor")
        if hx is not None:
            hx = _batch_state(hx, is_batched, "hx should also be {}-D but got {}-D tensor")
            self.check_forward_args(input, hx)
        else:
            self.check_input(input)
            hx = self._zeros(input, self.hidden_size)
        output, (h_n,) = self._run(input, (hx,))
        if not is_batched:
            return output.squeeze(0 if self.batch_first else 1), h_n.squeeze(1)
        return output, h_n


class GRU(RNNBase):
    """Gated recurrent unit, per step (``*`` elementwise, ``sigma`` the sigmoid)::

        r = sigma(W_ir x + b_ir + W_hr h + b_hr)
        z = sigma(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
        h' = (1 - z) * n + z * h

    Args and shapes as for :class:`RNN` (without ``nonlinearity``); gate weights stacked as r, z, n.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._run_packed(input, hx, (self.hidden_size,))
        input, is_batched = self._prepare(input, hx, "GRU", "")
        if hx is not None:
            hx = _batch_state(hx, is_batched, "hx should also be {}-D but got {}-D tensor")
            self.check_forward_args(input, hx)
        else:
            self.check_input(input)
            hx = self._zeros(input, self.hidden_size)
        output, (h_n,) = self._run(input, (hx,))
        if not is_batched:
            return output.squeeze(0 if self.batch_first else 1), h_n.squeeze(1)
        return output, h_n


class LSTM(RNNBase):
    """Long short-term memory, per step::

        i, f, g, o = sigma(.), sigma(.), tanh(.), sigma(.)  of  W_i* x + b_i* + W_h* h + b_h*
        c' = f * c + i * g
        h' = o * tanh(c')          (then h' = h' @ W_hr.T with proj_size > 0)

    Args as for :class:`GRU` plus ``proj_size=0``. ``hx`` is ``(h_0, c_0)`` with ``h_0``
    ``(D * num_layers, N, H_out)`` (``H_out = proj_size or hidden_size``) and ``c_0``
    ``(D * num_layers, N, hidden_size)``. Returns ``(output, (h_n, c_n))``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes=None):
        mini_batch = _mini_batch(self, input, batch_sizes)
        directions = 2 if self.bidirectional else 1
        return (self.num_layers * directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            out_size = self.proj_size if self.proj_size > 0 else self.hidden_size
            return self._run_packed(input, hx, (out_size, self.hidden_size))
        input, is_batched = self._prepare(input, hx, "LSTM", "")
        if hx is None:
            out_size = self.proj_size if self.proj_size > 0 else self.hidden_size
            hx = (self._zeros(input, out_size), self._zeros(input, self.hidden_size))
        else:
            h0, c0 = hx
            want = 3 if is_batched else 2
            if h0.dim() != want or c0.dim() != want:
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({h0.dim()}-D, {c0.dim()}-D) tensors")
            if not is_batched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
            hx = (h0, c0)
        self.check_forward_args(input, hx)
        output, (h_n, c_n) = self._run(input, hx)
        if not is_batched:
            return output.squeeze(0 if self.batch_first else 1), (h_n.squeeze(1), c_n.squeeze(1))
        return output, (h_n, c_n)


def _mini_batch(module, input, batch_sizes):
    """The batch size of a padded input, or of packed data (its first batch size)."""
    if batch_sizes is not None:
        return int(batch_sizes[0])
    return input.size(0) if module.batch_first else input.size(1)


def _batch_state(hx, is_batched, message):
    """Check an RNN/GRU initial state's rank against the input's and batch it if needed."""
    if not isinstance(hx, Tensor):
        raise TypeError(f"hx must be a Tensor, got {type(hx).__name__}")
    if is_batched:
        if hx.dim() != 3:
            raise RuntimeError("For batched 3-D input, " + message.format(3, hx.dim()))
        return hx
    if hx.dim() != 2:
        raise RuntimeError("For unbatched 2-D input, " + message.format(2, hx.dim()))
    return hx.unsqueeze(1)


# ================================================================================ cells
class RNNCellBase(Module):
    """Parameters of a one-step cell: ``weight_ih`` ``(chunks * hidden_size, input_size)``,
    ``weight_hh`` ``(chunks * hidden_size, hidden_size)``, ``bias_ih``/``bias_hh``
    ``(chunks * hidden_size)``, all from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **factory))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **factory))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _weights(self):
        p = self._parameters
        return p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"]

    def _check_step(self, input, states):
        """PyTorch's cell checks: the input's feature size, each state's batch and feature size."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                               f"{self.input_size}")
        for k, h in enumerate(states):
            if input.size(0) != h.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{k} batch size "
                                   f"{h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {h.size(1)}, expected "
                                   f"{self.hidden_size}")


def _cell_input(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}: expected input to be a Tensor, got {type(input).__name__}")
    if input.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
    return input.dim() == 2


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = act(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh)``, ``act`` tanh or relu.

    Shapes: input ``(N, input_size)`` or ``(input_size)``; hidden and output ``(N, hidden_size)``
    or ``(hidden_size)``.
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        is_batched = _cell_input("RNNCell", input)
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check_step(input, (hx,))
        h = R.rnn_cell(input, hx, *self._weights(), self.nonlinearity)
        return h if is_batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step (gates i, f, g, o): returns ``(h', c')``.

    Shapes: input ``(N, input_size)`` or ``(input_size)``; ``hx = (h, c)`` and the outputs
    ``(N, hidden_size)`` or ``(hidden_size)``; zeros when ``hx`` is None.
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        is_batched = _cell_input("LSTMCell", input)
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead")
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            z = zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
            hx = (z, z)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        self._check_step(input, hx)
        h, c = R.lstm_cell(input, hx, *self._weights())
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n; ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``).

    Shapes: input ``(N, input_size)`` or ``(input_size)``; hidden and output ``(N, hidden_size)``
    or ``(hidden_size)``.
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        is_batched = _cell_input("GRUCell", input)
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        self._check_step(input, (hx,))
        h = R.gru_cell(input, hx, *self._weights())
        return h if is_batched else h.squeeze(0)
