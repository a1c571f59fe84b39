"""Argument generators for ``nn.functional``.

Signatures follow :mod:`_op_specs` (``sig(b) -> (args, kwargs)``), called as
``T.nn.functional.<name>(...)``. Inputs are mostly float32/float64 at random
sizes, with a few float16 and integer inputs that torch may refuse. Dropout
runs with ``p=0`` or ``training=False`` only (torch's masks are random).
"""
from . import _specs_math as math_specs
from ._inputs import ALL_DTYPES, FLOAT_DTYPES
from ._specs_common import _kw, bool_src

MAIN_FLOATS = ("float32", "float32", "float64")


def float_dtype(b):
    """Mostly float32/float64; sometimes float16 or a dtype torch refuses."""
    if b.chance(0.9):
        return b.choice(MAIN_FLOATS)
    return b.choice(("float16", "int64", "bool"))


def reduction_kw(b):
    return _kw(reduction=b.choice(["'mean'", "'sum'", "'none'", None]))


# ------------------------------------------------------------ activations
def activation(extra=None):
    """Pointwise activations: any shape, optional keyword options."""
    def sig(b):
        x = b.tensor(dtype=float_dtype(b) if b.chance(0.9) else b.dtype(ALL_DTYPES))
        return [x], (extra(b) if extra and b.chance(0.6) else {})
    return sig


def inplace_activation(extra=None):
    """In-place activations (``relu_``...): inputs that do not require grad."""
    def sig(b):
        x = b.tensor(dtype=float_dtype(b), grad=False)
        return [x], (extra(b) if extra and b.chance(0.6) else {})
    return sig


ACTIVATION_OPTIONS = {
    "elu": lambda b: {"alpha": b.choice(["0.5", "1.0", "2.0"])},
    "celu": lambda b: {"alpha": b.choice(["0.5", "1.0", "2.0"])},
    "gelu": lambda b: {"approximate": b.choice(["'none'", "'tanh'"])},
    "softplus": lambda b: {"beta": b.choice(["1", "2.0", "0.5"]), "threshold": b.choice(["20", "1.0"])},
    "softshrink": lambda b: {"lambd": b.choice(["0.5", "1.0"])},
    "hardshrink": lambda b: {"lambd": b.choice(["0.5", "1.0"])},
    "hardtanh": lambda b: {"min_val": b.choice(["-1.0", "-0.5"]), "max_val": b.choice(["1.0", "2.0"])},
    "leaky_relu": lambda b: {"negative_slope": b.choice(["0.01", "0.2", "-0.5"])},
    "rrelu": lambda b: {"training": "False", "lower": "0.1", "upper": "0.3"},
    "relu6": None, "relu": None, "selu": None, "silu": None, "mish": None, "sigmoid": None,
    "tanh": None, "logsigmoid": None, "softsign": None, "tanhshrink": None, "hardsigmoid": None,
    "hardswish": None,
}


def threshold(b):
    x = b.tensor(dtype=float_dtype(b))
    return [x, b.choice(["0.0", "0.5", "-1.0"]), b.choice(["0.0", "-2.0", "7.0"])], {}


def glu(b):
    shape = list(b.shape(min_ndim=1, max_ndim=4))
    d = b.int_in(0, len(shape) - 1)
    if b.chance(0.9):
        shape[d] = 2 * b.int_in(1, 2)
    return [b.tensor(tuple(shape), float_dtype(b))], {"dim": str(d)}


def prelu(b):
    channels = b.int_in(1, 4)
    x = b.tensor((b.int_in(1, 3), channels) + b.shape(max_ndim=2, max_numel=8), float_dtype(b))
    weight = b.tensor((b.choice([1, channels]),), b.dtypes[x])
    return [x, weight], {}


def softmax_like(b):
    x = b.tensor(dtype=float_dtype(b))
    n = len(b.shapes[x])
    kwargs = {"dim": str(b.dim(n))}
    if b.chance(0.2):
        kwargs["dtype"] = "T." + b.choice(FLOAT_DTYPES)
    return [x], kwargs


def normalize(b):
    x = b.tensor(dtype=float_dtype(b), min_ndim=1)
    return [x], _kw(p=b.choice(["1", "2", "3.0", None]), dim=str(b.dim(len(b.shapes[x]))) if b.chance(0.6) else None,
                    eps=b.choice(["1e-12", "0.1", None]))


# --------------------------------------------------------- linear / conv
def linear(b):
    dtype = float_dtype(b)
    fan_in, fan_out = b.int_in(1, 5), b.int_in(1, 5)
    x = b.tensor(b.shape(max_ndim=3, max_numel=12) + (fan_in,), dtype)
    w = b.tensor((fan_out, fan_in) if b.chance(0.95) else (fan_in,), dtype)
    args = [x, w]
    if b.chance(0.7):
        args.append(b.tensor((fan_out,), dtype))
    return args, {}


def bilinear(b):
    dtype = float_dtype(b)
    n, i1, i2, o = b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3)
    args = [b.tensor((n, i1), dtype), b.tensor((n, i2), dtype), b.tensor((o, i1, i2), dtype)]
    if b.chance(0.6):
        args.append(b.tensor((o,), dtype))
    return args, {}


def conv(spatial, transpose=False):
    def sig(b):
        dtype = float_dtype(b)
        groups = b.choice([1, 1, 2])
        c_in, c_out = groups * b.int_in(1, 2), groups * b.int_in(1, 2)
        kernel = tuple(b.int_in(1, 3) for _ in range(spatial))
        size = tuple(b.int_in(max(kernel) + 1, 6) for _ in range(spatial))
        batch = (b.int_in(1, 2),) if b.chance(0.85) else ()
        x = b.tensor(batch + (c_in,) + size, dtype)
        w_shape = (c_in, c_out // groups) + kernel if transpose else (c_out, c_in // groups) + kernel
        args = [x, b.tensor(w_shape, dtype)]
        if b.chance(0.6):
            args.append(b.tensor((c_out,), dtype))
        stride = b.int_in(1, 2)
        kwargs = _kw(stride=str(stride) if b.chance(0.5) else None, groups=str(groups) if groups > 1 else None)
        dilation = b.int_in(1, 2) if b.chance(0.4) else 1
        if dilation > 1:
            kwargs["dilation"] = str(dilation)
        if transpose:
            if b.chance(0.5):
                kwargs["padding"] = str(b.int_in(0, 1))
            if stride > 1 and b.chance(0.4):
                kwargs["stride"] = str(stride)
                kwargs["output_padding"] = "1"
        elif b.chance(0.5):
            kwargs["padding"] = b.choice(["0", "1", "'same'", "'valid'"])
            if kwargs["padding"] == "'same'" and b.chance(0.8):
                kwargs.pop("stride", None)
        return args, kwargs
    return sig


# --------------------------------------------------------------- pooling
def _pool_input(b, spatial, min_size=2):
    dtype = float_dtype(b)
    batch = (b.int_in(1, 2),) if b.chance(0.8) else ()
    return b.tensor(batch + (b.int_in(1, 3),) + tuple(b.int_in(min_size, 6) for _ in range(spatial)), dtype)


def max_pool(spatial, with_indices=False):
    def sig(b):
        x = _pool_input(b, spatial)
        kernel = b.int_in(1, 3)
        kwargs = _kw(stride=str(b.int_in(1, 3)) if b.chance(0.5) else None,
                     padding=str(b.int_in(0, kernel // 2)) if b.chance(0.4) else None,
                     dilation=str(b.int_in(1, 2)) if b.chance(0.3) else None,
                     ceil_mode=bool_src(b) if b.chance(0.4) else None,
                     return_indices=None if with_indices else (bool_src(b) if b.chance(0.3) else None))
        return [x, str(kernel)], kwargs
    return sig


def avg_pool(spatial):
    def sig(b):
        x = _pool_input(b, spatial)
        kernel = b.int_in(1, 3)
        kwargs = _kw(stride=str(b.int_in(1, 3)) if b.chance(0.5) else None,
                     padding=str(b.int_in(0, kernel // 2)) if b.chance(0.4) else None,
                     ceil_mode=bool_src(b) if b.chance(0.4) else None,
                     count_include_pad=bool_src(b) if b.chance(0.4) else None)
        return [x, str(kernel)], kwargs
    return sig


def adaptive_pool(spatial, with_indices_option=False):
    def sig(b):
        x = _pool_input(b, spatial, min_size=1)
        if spatial == 1 or b.chance(0.5):
            size = str(b.int_in(1, 5))
        else:
            size = repr(tuple(b.choice([b.int_in(1, 4), None]) for _ in range(spatial)))
        kwargs = _kw(return_indices=bool_src(b) if with_indices_option and b.chance(0.3) else None)
        return [x, size], kwargs
    return sig


# ---------------------------------------------------------- normalization
def batch_norm(b):
    dtype = b.choice(MAIN_FLOATS)
    channels = b.int_in(1, 3)
    x = b.tensor((b.int_in(1, 4), channels) + b.shape(max_ndim=2, max_numel=9), dtype)
    mean = b.tensor((channels,), dtype, grad=False, layout="contiguous")
    var = b.tensor((channels,), dtype, grad=False, layout="contiguous",
                   values=b.rng.uniform(0.5, 2.0, channels).round(2))
    training = b.chance(0.5)
    args = [x, "None" if training and b.chance(0.3) else mean, "None" if training and b.chance(0.3) else var]
    kwargs = {"training": str(training)}
    if b.chance(0.6):
        kwargs["weight"] = b.tensor((channels,), dtype)
        kwargs["bias"] = b.tensor((channels,), dtype)
    kwargs.update(_kw(momentum=b.choice(["0.1", "0.5", None]), eps=b.choice(["1e-5", "0.1", None])))
    if args[1] == "None" or args[2] == "None":
        args[1] = args[2] = "None"
    return args, kwargs


def instance_norm(b):
    dtype = b.choice(MAIN_FLOATS)
    channels = b.int_in(1, 3)
    x = b.tensor((b.int_in(1, 3), channels) + tuple(b.int_in(2, 4) for _ in range(b.int_in(1, 2))), dtype)
    kwargs = {}
    if b.chance(0.5):
        kwargs["weight"] = b.tensor((channels,), dtype)
        kwargs["bias"] = b.tensor((channels,), dtype)
    return [x], dict(kwargs, **_kw(eps=b.choice(["1e-5", "0.1", None])))


def layer_norm(b, rms=False):
    dtype = float_dtype(b)
    shape = b.shape(min_ndim=1, max_ndim=4)
    k = b.int_in(1, len(shape))
    normalized = tuple(shape[len(shape) - k:])
    x = b.tensor(shape, dtype)
    kwargs = {}
    if b.chance(0.6):
        kwargs["weight"] = b.tensor(normalized, dtype)
        if not rms and b.chance(0.7):
            kwargs["bias"] = b.tensor(normalized, dtype)
    kwargs.update(_kw(eps=b.choice(["1e-5", "0.1", None])))
    return [x, repr(normalized)], kwargs


def rms_norm(b):
    return layer_norm(b, rms=True)


def group_norm(b):
    dtype = float_dtype(b)
    groups = b.int_in(1, 3)
    channels = groups * b.int_in(1, 2)
    x = b.tensor((b.int_in(1, 3), channels) + b.shape(max_ndim=2, max_numel=9), dtype)
    kwargs = {}
    if b.chance(0.6):
        kwargs["weight"] = b.tensor((channels,), dtype)
        kwargs["bias"] = b.tensor((channels,), dtype)
    return [x, str(groups if b.chance(0.95) else groups + 1)], dict(kwargs, **_kw(eps=b.choice(["1e-5", None])))


# ------------------------------------------------------------ embeddings
def embedding(b):
    num, dim = b.int_in(1, 6), b.int_in(1, 4)
    idx = b.index_tensor(num, b.shape(max_ndim=3, max_numel=12), allow_negative=False)
    weight = b.tensor((num, dim), float_dtype(b))
    return [idx, weight], _kw(padding_idx=str(b.int_in(0, num - 1)) if b.chance(0.3) else None)


def one_hot(b):
    num = b.int_in(1, 5)
    idx = b.index_tensor(num, b.shape(max_ndim=3, max_numel=12), allow_negative=False)
    return [idx], _kw(num_classes=str(b.choice([num, num + 2, -1])) if b.chance(0.6) else None)


def dropout(b):
    x = b.tensor(dtype=float_dtype(b), min_ndim=2 if b.chance(0.8) else 0, max_ndim=b.choice([3, 5]))
    if b.chance(0.5):
        return [x], {"p": b.choice(["0.0", "0.5"]), "training": "False"}
    return [x], {"p": "0.0"}


# ---------------------------------------------------------------- losses
def pointwise_loss(extra=None):
    def sig(b):
        x = b.tensor(dtype=float_dtype(b))
        target_shape = b.shapes[x] if b.chance(0.85) else b.broadcast_partner(b.shapes[x])
        y = b.tensor(target_shape, b.dtypes[x] if b.chance(0.9) else None)
        kwargs = reduction_kw(b)
        if extra and b.chance(0.5):
            kwargs.update(extra(b))
        return [x, y], kwargs
    return sig


def _probabilities(b, shape, dtype, grad=None):
    values = b.rng.uniform(0.01, 0.99, shape).round(2)
    return b.tensor(shape, dtype, values=values, layout="contiguous", grad=grad)


def binary_cross_entropy(b):
    dtype = b.choice(MAIN_FLOATS)
    shape = b.shape(max_ndim=3)
    kwargs = reduction_kw(b)
    if b.chance(0.3):
        kwargs["weight"] = b.tensor(shape, dtype, grad=False)
    return [_probabilities(b, shape, dtype), _probabilities(b, shape, dtype, grad=False)], kwargs


def bce_with_logits(b):
    x = b.tensor(dtype=float_dtype(b))
    shape = b.shapes[x]
    kwargs = reduction_kw(b)
    if b.chance(0.3):
        kwargs["pos_weight"] = b.tensor(shape[-1:], b.dtypes[x], grad=False)
    if b.chance(0.3):
        kwargs["weight"] = b.tensor(shape, b.dtypes[x], grad=False)
    return [x, _probabilities(b, shape, b.dtypes[x], grad=False)], kwargs


def _class_problem(b, allow_probs):
    dtype = float_dtype(b)
    classes = b.int_in(1, 4)
    batch = b.int_in(1, 3)
    extra = tuple(b.int_in(1, 3) for _ in range(b.int_in(0, 2)))
    unbatched = b.chance(0.1)
    shape = (classes,) if unbatched else (batch, classes) + extra
    x = b.tensor(shape, dtype)
    target_shape = () if unbatched else (batch,) + extra
    if allow_probs and b.chance(0.3):
        target = _probabilities(b, shape, dtype, grad=False)
    else:
        target = b.index_tensor(classes, target_shape, allow_negative=False)
    return x, target, classes, dtype


def cross_entropy(b, nll=False):
    x, target, classes, dtype = _class_problem(b, allow_probs=not nll)
    if nll:
        x = f"{x}.log_softmax({0 if len(b.shapes[x]) == 1 else 1})"
    kwargs = reduction_kw(b)
    if b.chance(0.3):
        kwargs["weight"] = b.tensor((classes,), dtype, grad=False,
                                    values=b.rng.uniform(0.1, 2, classes).round(2), layout="contiguous")
    if b.chance(0.3) and b.dtypes.get(target) == "int64":
        kwargs["ignore_index"] = str(b.int_in(0, classes - 1))
    if not nll and b.chance(0.3):
        kwargs["label_smoothing"] = b.choice(["0.1", "0.25"])
    return [x, target], kwargs


def nll_loss(b):
    return cross_entropy(b, nll=True)


def kl_div(b):
    dtype = b.choice(MAIN_FLOATS)
    shape = b.shape(min_ndim=1, max_ndim=3)
    log_target = b.chance(0.4)
    x = b.tensor(shape, dtype)
    target = _probabilities(b, shape, dtype, grad=False)
    if log_target:
        target = f"{target}.log()"
    kwargs = _kw(reduction=b.choice(["'mean'", "'sum'", "'none'", "'batchmean'", None]))
    if log_target:
        kwargs["log_target"] = "True"
    return [f"{x}.log_softmax(-1)", target], kwargs


def poisson_nll_loss(b):
    dtype = b.choice(MAIN_FLOATS)
    shape = b.shape(max_ndim=3)
    log_input = b.chance(0.5)
    x = b.tensor(shape, dtype) if log_input else _probabilities(b, shape, dtype)
    target = b.tensor(shape, dtype, grad=False, values=b.rng.integers(0, 5, shape), layout="contiguous")
    kwargs = dict(reduction_kw(b), log_input=str(log_input))
    if b.chance(0.4):
        kwargs["full"] = "True"
    return [x, target], kwargs


def gaussian_nll_loss(b):
    dtype = b.choice(MAIN_FLOATS)
    shape = b.shape(min_ndim=1, max_ndim=3)
    var_shape = shape if b.chance(0.7) else shape[:-1] + (1,)
    var = _probabilities(b, var_shape, dtype)
    kwargs = dict(reduction_kw(b), **_kw(full=bool_src(b) if b.chance(0.4) else None))
    return [b.tensor(shape, dtype), b.tensor(shape, dtype), var], kwargs


def margin_ranking_loss(b):
    dtype = float_dtype(b)
    shape = b.shape(max_ndim=2)
    sign = b.rng.choice([-1.0, 1.0], shape)
    return [b.tensor(shape, dtype), b.tensor(shape, dtype),
            b.tensor(shape, dtype, grad=False, values=sign, layout="contiguous")], dict(
        reduction_kw(b), **_kw(margin=b.choice(["0.0", "0.5", None])))


def cosine_embedding_loss(b):
    dtype = b.choice(MAIN_FLOATS)
    n, d = b.int_in(1, 4), b.int_in(1, 4)
    sign = b.rng.choice([-1.0, 1.0], (n,))
    return [b.tensor((n, d), dtype), b.tensor((n, d), dtype),
            b.tensor((n,), dtype, grad=False, values=sign, layout="contiguous")], dict(
        reduction_kw(b), **_kw(margin=b.choice(["0.0", "0.5", None])))


def soft_margin_loss(b):
    dtype = float_dtype(b)
    shape = b.shape(max_ndim=3)
    sign = b.rng.choice([-1.0, 1.0], shape)
    target = b.tensor(shape, dtype, grad=False, values=sign, layout="contiguous")
    return [b.tensor(shape, dtype), target], reduction_kw(b)


# ------------------------------------------------------ attention, resize
def scaled_dot_product_attention(b):
    dtype = b.choice(MAIN_FLOATS)
    batch = b.shape(max_ndim=2, max_numel=4)
    lq, lk, e, ev = b.int_in(1, 4), b.int_in(1, 4), b.int_in(1, 4), b.int_in(1, 4)
    q, k, v = (b.tensor(batch + (lq, e), dtype), b.tensor(batch + (lk, e), dtype), b.tensor(batch + (lk, ev), dtype))
    kwargs = {}
    roll = b.rng.random()
    if roll < 0.25:
        kwargs["is_causal"] = "True"
    elif roll < 0.4:
        kwargs["attn_mask"] = b.tensor((lq, lk), "bool", grad=False,
                                       values=b.rng.random((lq, lk)) < 0.8, layout="contiguous")
    elif roll < 0.55:
        kwargs["attn_mask"] = b.tensor((lq, lk), dtype, grad=False)
    if b.chance(0.3):
        kwargs["scale"] = b.choice(["0.5", "2.0"])
    return [q, k, v], kwargs


def interpolate(b):
    dtype = b.choice(MAIN_FLOATS)
    spatial = b.int_in(1, 2)
    x = b.tensor((b.int_in(1, 2), b.int_in(1, 2)) + tuple(b.int_in(1, 5) for _ in range(spatial)), dtype)
    modes = {1: ["'nearest'", "'linear'", "'area'", "'nearest-exact'"],
             2: ["'nearest'", "'bilinear'", "'bicubic'", "'area'", "'nearest-exact'"]}[spatial]
    mode = b.choice(modes)
    kwargs = {"mode": mode}
    if b.chance(0.5):
        kwargs["size"] = str(b.int_in(1, 7)) if b.chance(0.5) else repr(tuple(b.int_in(1, 7) for _ in range(spatial)))
    else:
        kwargs["scale_factor"] = b.choice(["2", "0.5", "1.5", "3.0"])
    if mode in ("'linear'", "'bilinear'", "'bicubic'") and b.chance(0.5):
        kwargs["align_corners"] = bool_src(b)
    return [x], kwargs


def pad(b):
    dtype = b.dtype(ALL_DTYPES) if b.chance(0.2) else b.choice(MAIN_FLOATS)
    mode = b.choice(["'constant'", "'constant'", "'reflect'", "'replicate'", "'circular'"])
    spatial = b.int_in(1, 2)
    lead = (b.int_in(1, 2), b.int_in(1, 2)) if mode != "'constant'" else b.shape(max_ndim=2, max_numel=4)
    x = b.tensor(tuple(lead) + tuple(b.int_in(2, 4) for _ in range(spatial)), dtype)
    widths = tuple(b.int_in(-1 if mode == "'constant'" else 0, 2) for _ in range(2 * spatial))
    kwargs = {"mode": mode}
    if mode == "'constant'" and b.chance(0.5):
        kwargs["value"] = b.choice(["1.5", "-2", "0"])
    return [x, repr(widths)], kwargs


FUNCTIONAL = {
    "pdist": math_specs.pdist,   # the op's own generator: it avoids the inputs torch's backward crashes on
    "threshold": threshold, "glu": glu, "prelu": prelu, "softmax": softmax_like, "log_softmax": softmax_like,
    "softmin": softmax_like, "normalize": normalize, "linear": linear, "bilinear": bilinear,
    "conv1d": conv(1), "conv2d": conv(2), "conv_transpose1d": conv(1, True), "conv_transpose2d": conv(2, True),
    "max_pool1d": max_pool(1), "max_pool2d": max_pool(2), "max_pool1d_with_indices": max_pool(1, True),
    "max_pool2d_with_indices": max_pool(2, True), "avg_pool1d": avg_pool(1), "avg_pool2d": avg_pool(2),
    "adaptive_avg_pool1d": adaptive_pool(1), "adaptive_avg_pool2d": adaptive_pool(2),
    "adaptive_max_pool1d": adaptive_pool(1, True), "adaptive_max_pool2d": adaptive_pool(2, True),
    "adaptive_max_pool1d_with_indices": adaptive_pool(1), "adaptive_max_pool2d_with_indices": adaptive_pool(2),
    "batch_norm": batch_norm, "instance_norm": instance_norm, "layer_norm": layer_norm, "rms_norm": rms_norm,
    "group_norm": group_norm, "embedding": embedding, "one_hot": one_hot,
    "dropout": dropout, "dropout1d": dropout, "dropout2d": dropout, "dropout3d": dropout,
    "alpha_dropout": dropout, "feature_alpha_dropout": dropout,
    "mse_loss": pointwise_loss(), "l1_loss": pointwise_loss(),
    "smooth_l1_loss": pointwise_loss(lambda b: {"beta": b.choice(["0.5", "1.0", "2.0"])}),
    "huber_loss": pointwise_loss(lambda b: {"delta": b.choice(["0.5", "1.0", "2.0"])}),
    "binary_cross_entropy": binary_cross_entropy, "binary_cross_entropy_with_logits": bce_with_logits,
    "cross_entropy": cross_entropy, "nll_loss": nll_loss, "kl_div": kl_div,
    "poisson_nll_loss": poisson_nll_loss, "gaussian_nll_loss": gaussian_nll_loss,
    "margin_ranking_loss": margin_ranking_loss, "cosine_embedding_loss": cosine_embedding_loss,
    "soft_margin_loss": soft_margin_loss, "scaled_dot_product_attention": scaled_dot_product_attention,
    "interpolate": interpolate, "pad": pad,
}
FUNCTIONAL["threshold_"] = lambda b: ([b.tensor(dtype=float_dtype(b), grad=False), "0.5", "-2.0"], {})
for _name, _options in ACTIVATION_OPTIONS.items():
    FUNCTIONAL[_name] = activation(_options)
    FUNCTIONAL[_name + "_"] = inplace_activation(_options)

FUNCTIONAL_NOT_COVERED = {
    "multi_head_attention_forward": "17 positional tensors; covered through nn.MultiheadAttention",
}


def _register_added():
    from ._nn_functional_specs_added import FUNCTIONAL_ADDED, NOT_COVERED_ADDED
    FUNCTIONAL.update(FUNCTIONAL_ADDED)
    FUNCTIONAL_NOT_COVERED.update(NOT_COVERED_ADDED)


_register_added()
