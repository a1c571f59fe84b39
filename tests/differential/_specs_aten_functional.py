"""Argument generators for the ``torch.<name>`` forms of ``nn.functional`` operations
(``torch.conv2d``, ``torch.dropout``, ``torch.kl_div``...), whose signatures are ATen's: losses take
``reduction`` as an integer, dropouts ``(input, p, train)`` positionally, ``embedding`` the weight
first, ``batch_norm`` nine positional arguments (``sig(b) -> (args, kwargs)``, as in :mod:`_op_specs`).
Where the top-level form takes the functional's arguments, the functional's generator is reused."""
from ._nn_functional_specs import FUNCTIONAL, MAIN_FLOATS, _probabilities, float_dtype
from ._specs_common import _kw, bool_src

_REDUCTION_CODES = {"'none'": "0", "'mean'": "1", "'sum'": "2"}


def functional_like(sig):
    """A functional's generator drawing NaN/inf/huge values in a minority of cases only, as the
    functional's own cases do (``_op_table.make_case``)."""
    def wrapped(b):
        b.specials = b.chance(0.15)
        return sig(b)
    return wrapped


def int_reduction(sig):
    """The functional's generator with ``reduction`` given as ATen's integer code (sometimes 3 or
    more, which reduces nothing)."""
    def wrapped(b):
        args, kwargs = sig(b)
        kwargs = dict(kwargs)
        name = kwargs.pop("reduction", None)
        if name in _REDUCTION_CODES:
            kwargs["reduction"] = _REDUCTION_CODES[name] if b.chance(0.95) else "3"
        return args, kwargs
    return wrapped


def without(sig, *names):
    """The functional's generator without keyword arguments the top-level form lacks."""
    def wrapped(b):
        args, kwargs = sig(b)
        return args, {k: v for k, v in kwargs.items() if k not in names}
    return wrapped


def dropout(inplace):
    """``(input, p, train)``: evaluation, ``p`` 0 or 1 (deterministic), sometimes a ``p`` out of range;
    the feature forms need 2 dims (drawn below that sometimes)."""
    def sig(b):
        x = b.tensor(dtype=float_dtype(b), min_ndim=2 if b.chance(0.85) else 0, max_ndim=4,
                     grad=False if inplace else None)
        train = bool_src(b)
        if train == "False":
            p = b.choice(["0.0", "1.0", "0.5"])
        else:
            p = b.choice(["0.0", "1.0", "1.0", "1.5" if b.chance(0.2) else "0.0"])
        return [x, p, train], {}
    return sig


def embedding(b):
    idx_args, kwargs = FUNCTIONAL["embedding"](b)
    args = [idx_args[1], idx_args[0]]
    if "padding_idx" in kwargs or b.chance(0.2):
        args.append(kwargs.get("padding_idx", "-1"))
    return args, {}


def batch_norm(b):
    dtype = b.choice(MAIN_FLOATS)
    channels = b.int_in(1, 3)
    x = b.tensor((b.int_in(1, 4), channels) + b.shape(max_ndim=2, max_numel=9), dtype)
    training = b.chance(0.5)
    if training and b.chance(0.3):
        mean = var = "None"
    else:
        mean = b.tensor((channels,), dtype, grad=False, layout="contiguous")
        var = b.tensor((channels,), dtype, grad=False, layout="contiguous",
                       values=b.rng.uniform(0.5, 2.0, channels).round(2))
    weight = b.tensor((channels,), dtype) if b.chance(0.6) else "None"
    bias = b.tensor((channels,), dtype) if b.chance(0.6) else "None"
    return [x, weight, bias, mean, var, str(training), b.choice(["0.1", "0.5"]), b.choice(["1e-5", "0.1"]),
            bool_src(b)], {}


def kl_div(b):
    dtype = b.choice(MAIN_FLOATS)
    shape = b.shape(min_ndim=1, max_ndim=3)
    log_target = b.chance(0.4)
    target = _probabilities(b, shape, dtype, grad=False)
    args = [f"{b.tensor(shape, dtype)}.log_softmax(-1)", f"{target}.log()" if log_target else target]
    if b.chance(0.7):
        args.append(b.choice(["0", "1", "2"]))
    return args, _kw(log_target="True" if log_target else None)


def bce_with_logits(b):
    args, kwargs = int_reduction(FUNCTIONAL["binary_cross_entropy_with_logits"])(b)
    return args, kwargs


def hinge_embedding_loss(b):
    x = b.tensor(dtype=b.choice(MAIN_FLOATS))
    shape = b.shapes[x]
    sign = b.rng.choice([-1.0, 1.0], shape)
    target = b.tensor(shape, b.dtypes[x], grad=False, values=sign, layout="contiguous")
    return [x, target], _kw(margin=b.choice(["1.0", "0.5", None]), reduction=b.choice(["0", "1", "2", None]))


def poisson_nll_loss(b):
    args, kwargs = FUNCTIONAL["poisson_nll_loss"](b)
    code = _REDUCTION_CODES.get(kwargs.get("reduction"), "1")
    return args + [kwargs["log_input"], kwargs.get("full", "False"), b.choice(["1e-8", "0.5"]), code], {}


def fill(b):
    x = b.tensor()
    if b.chance(0.3):
        value = b.tensor(() if b.chance(0.9) else (2,), b.dtype(("float32", "int64", "bool")))
    else:
        value = b.python_scalar()
    return [x, value], {}


def get_device(b):
    """On a CPU copy (torch, the reference, has no GPU here; the GPU index is tested in tests/ops)."""
    return [f"{b.tensor()}.cpu()"], {}


_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def recurrent(name):
    """``(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)``
    (dropout 0: its masks are random)."""
    def sig(b):
        dtype = b.choice(MAIN_FLOATS)
        gates, hidden, size = _GATES[name], b.int_in(1, 3), b.int_in(1, 3)
        steps, batch, layers = b.int_in(1, 3), b.int_in(1, 2), b.int_in(1, 2)
        bidirectional, bias, batch_first = b.chance(0.4), b.chance(0.7), b.chance(0.3)
        directions = 2 if bidirectional else 1
        weights = []
        for layer in range(layers):
            for _ in range(directions):
                width = size if layer == 0 else hidden * directions
                weights += [b.tensor((gates * hidden, width), dtype), b.tensor((gates * hidden, hidden), dtype)]
                if bias:
                    weights += [b.tensor((gates * hidden,), dtype), b.tensor((gates * hidden,), dtype)]
        x = b.tensor((batch, steps, size) if batch_first else (steps, batch, size), dtype)
        states = [b.tensor((layers * directions, batch, hidden), dtype) for _ in range(2 if name == "lstm" else 1)]
        hx = f"[{', '.join(states)}]" if name == "lstm" else states[0]
        return [x, hx, f"[{', '.join(weights)}]", str(bias), str(layers), "0.0", bool_src(b), str(bidirectional),
                str(batch_first)], {}
    return sig


def recurrent_cell(name):
    def sig(b):
        dtype = b.choice(MAIN_FLOATS)
        gates, hidden, size, batch = _GATES[name[:-5]], b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3)
        args = [b.tensor((batch, size), dtype)]
        states = [b.tensor((batch, hidden), dtype) for _ in range(2 if name == "lstm_cell" else 1)]
        args.append(f"[{', '.join(states)}]" if name == "lstm_cell" else states[0])
        args += [b.tensor((gates * hidden, size), dtype), b.tensor((gates * hidden, hidden), dtype)]
        if b.chance(0.7):
            args += [b.tensor((gates * hidden,), dtype), b.tensor((gates * hidden,), dtype)]
        return args, {}
    return sig


def scalar_tensor(b):
    return [b.python_scalar()], _kw(dtype=b.choice(["T.float64", "T.int32", "T.bool", None, None]))


_SPECS = {
    "conv1d": FUNCTIONAL["conv1d"], "conv2d": FUNCTIONAL["conv2d"], "conv3d": FUNCTIONAL["conv3d"],
    "conv_transpose1d": FUNCTIONAL["conv_transpose1d"], "conv_transpose2d": FUNCTIONAL["conv_transpose2d"],
    "conv_transpose3d": FUNCTIONAL["conv_transpose3d"],
    "max_pool1d": without(FUNCTIONAL["max_pool1d"], "return_indices"),
    "max_pool2d": without(FUNCTIONAL["max_pool2d"], "return_indices"),
    "max_pool3d": without(FUNCTIONAL["max_pool3d"], "return_indices"),
    "max_pool1d_with_indices": FUNCTIONAL["max_pool1d_with_indices"],
    "avg_pool1d": FUNCTIONAL["avg_pool1d"], "adaptive_avg_pool1d": FUNCTIONAL["adaptive_avg_pool1d"],
    "adaptive_max_pool1d": FUNCTIONAL["adaptive_max_pool1d_with_indices"],
    "dropout": dropout(False), "alpha_dropout": dropout(False), "feature_dropout": dropout(False),
    "feature_alpha_dropout": dropout(False), "dropout_": dropout(True), "alpha_dropout_": dropout(True),
    "feature_dropout_": dropout(True), "feature_alpha_dropout_": dropout(True),
    "threshold": FUNCTIONAL["threshold"], "threshold_": FUNCTIONAL["threshold_"], "prelu": FUNCTIONAL["prelu"],
    "bilinear": FUNCTIONAL["bilinear"], "rms_norm": FUNCTIONAL["rms_norm"], "embedding": embedding,
    "batch_norm": batch_norm, "kl_div": kl_div, "binary_cross_entropy_with_logits": bce_with_logits,
    "cosine_embedding_loss": int_reduction(FUNCTIONAL["cosine_embedding_loss"]),
    "margin_ranking_loss": int_reduction(FUNCTIONAL["margin_ranking_loss"]),
    "hinge_embedding_loss": hinge_embedding_loss, "poisson_nll_loss": poisson_nll_loss,
    "triplet_margin_loss": int_reduction(FUNCTIONAL["triplet_margin_loss"]),
    "ctc_loss": int_reduction(FUNCTIONAL["ctc_loss"]), "fill": fill, "scalar_tensor": scalar_tensor,
    "get_device": get_device,
    **{name: recurrent(name) for name in _GATES}, **{name + "_cell": recurrent_cell(name + "_cell") for name in _GATES},
    **{name: FUNCTIONAL[name] for name in ("selu", "selu_", "celu", "celu_", "rrelu", "rrelu_", "hardshrink")},
}
SPECS = {name: functional_like(sig) for name, sig in _SPECS.items()}
