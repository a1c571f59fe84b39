"""Cases for ``nn`` modules: bodies ``body(b) -> source`` calling a module leaf.

The module is a *leaf* whose source constructs it on ``dev`` and then
overwrites every parameter, in name order, with a seeded NumPy draw (see
:func:`module_leaf`): both libraries get the same weights, and the parameter
gradients are compared like any other leaf's. Modules run in eval mode unless
a case says ``train`` (BatchNorm), with dropout 0 where they have one.
"""
from ._nn_functional_specs import MAIN_FLOATS
from ._specs_common import bool_src


def module_leaf(constructor, seed, scale=0.5, mode="eval", double=False):
    """Source of a module built on ``dev`` with seeded parameters (sorted by name)."""
    module = f"T.nn.{constructor}" + (".double()" if double else "") + f".to(dev).{mode}()"
    fill = (f"[p.data.copy_(T.tensor(r.standard_normal(tuple(p.shape)).round(2) * {scale}, dtype=p.dtype, "
            f"device=p.device)) for _, p in sorted(m.named_parameters())]")
    return f"(lambda m, r: ({fill}, m)[1])({module}, np.random.default_rng({seed}))"


def _module(b, constructor, mode="eval"):
    """Add a module leaf; return its expression name."""
    b.leaves.append(module_leaf(constructor, int(b.rng.integers(1 << 30)), double=b.chance(0.25), mode=mode))
    return f"a{len(b.leaves) - 1}"


def _dtype_of_last_module(b):
    return "float64" if ".double()" in b.leaves[-1] else "float32"


def linear_module(b):
    fan_in, fan_out = b.int_in(1, 5), b.int_in(1, 5)
    m = _module(b, f"Linear({fan_in}, {fan_out}, bias={bool_src(b)})")
    x = b.tensor(b.shape(max_ndim=2, max_numel=6) + (fan_in,), _dtype_of_last_module(b))
    return f"{m}({x})"


def conv_module(spatial, transpose=False):
    def body(b):
        groups = b.choice([1, 2])
        c_in, c_out = groups * b.int_in(1, 2), groups * b.int_in(1, 2)
        kernel = b.int_in(1, 3)
        options = f"stride={b.int_in(1, 2)}, padding={b.int_in(0, 1)}, groups={groups}, bias={bool_src(b)}"
        if not transpose and b.chance(0.3):
            options += ", padding_mode=" + b.choice(["'reflect'", "'replicate'", "'circular'"])
        kind = ("ConvTranspose" if transpose else "Conv") + f"{spatial}d"
        m = _module(b, f"{kind}({c_in}, {c_out}, {kernel}, {options})")
        x = b.tensor((b.int_in(1, 2), c_in) + tuple(b.int_in(3, 5) for _ in range(spatial)), _dtype_of_last_module(b))
        return f"{m}({x})"
    return body


def recurrent_module(kind):
    def body(b):
        inp, hidden = b.int_in(1, 3), b.int_in(1, 3)
        layers = b.int_in(1, 2)
        batch_first = b.chance(0.5)
        bidirectional = b.chance(0.4)
        options = f"num_layers={layers}, batch_first={batch_first}, bidirectional={bidirectional}, bias={bool_src(b)}"
        m = _module(b, f"{kind}({inp}, {hidden}, {options})")
        dtype = _dtype_of_last_module(b)
        seq, batch = b.int_in(1, 4), b.int_in(1, 3)
        shape = (batch, seq, inp) if batch_first else (seq, batch, inp)
        if b.chance(0.15):
            shape = (seq, inp)
            batch = None
        x = b.tensor(shape, dtype)
        if b.chance(0.4):
            state_shape = (layers * (2 if bidirectional else 1),) + ((batch,) if batch else ()) + (hidden,)
            h0 = b.tensor(state_shape, dtype)
            if kind == "LSTM":
                return f"{m}({x}, ({h0}, {b.tensor(state_shape, dtype)}))"
            return f"{m}({x}, {h0})"
        return f"{m}({x})"
    return body


def cell_module(kind):
    def body(b):
        inp, hidden = b.int_in(1, 3), b.int_in(1, 3)
        m = _module(b, f"{kind}({inp}, {hidden}, bias={bool_src(b)})")
        dtype = _dtype_of_last_module(b)
        batch = b.choice([(b.int_in(1, 3),), ()])
        return f"{m}({b.tensor(batch + (inp,), dtype)})"
    return body


def multihead_attention(b):
    heads = b.int_in(1, 2)
    embed = heads * b.int_in(1, 3)
    batch_first = b.chance(0.5)
    kdim = b.choice([None, b.int_in(1, 3)])
    options = f"batch_first={batch_first}, bias={bool_src(b)}" + (f", kdim={kdim}, vdim={kdim}" if kdim else "")
    m = _module(b, f"MultiheadAttention({embed}, {heads}, {options})")
    dtype = _dtype_of_last_module(b)
    batch, lq, lk = b.int_in(1, 2), b.int_in(1, 3), b.int_in(1, 3)
    def seq(length, dim):
        return (batch, length, dim) if batch_first else (length, batch, dim)
    q = b.tensor(seq(lq, embed), dtype)
    k = b.tensor(seq(lk, kdim or embed), dtype)
    v = b.tensor(seq(lk, kdim or embed), dtype)
    kwargs = []
    if b.chance(0.3):
        mask = b.tensor((batch, lk), "bool", grad=False, values=b.rng.random((batch, lk)) < 0.3)
        kwargs.append(f"key_padding_mask={mask}")
    if b.chance(0.3):
        kwargs.append(f"need_weights={bool_src(b)}")
    if b.chance(0.3):
        kwargs.append("average_attn_weights=False")
    return f"{m}({', '.join([q, k, v] + kwargs)})"


def transformer_encoder_layer(b):
    heads = b.int_in(1, 2)
    d_model = heads * b.int_in(1, 3)
    batch_first = b.chance(0.5)
    options = (f"dim_feedforward={b.int_in(1, 6)}, dropout=0.0, batch_first={batch_first}, "
               f"norm_first={bool_src(b)}, activation=" + b.choice(["'relu'", "'gelu'"]))
    m = _module(b, f"TransformerEncoderLayer({d_model}, {heads}, {options})")
    dtype = _dtype_of_last_module(b)
    batch, length = b.int_in(1, 2), b.int_in(1, 4)
    x = b.tensor((batch, length, d_model) if batch_first else (length, batch, d_model), dtype)
    if b.chance(0.3):
        mask = b.tensor((length, length), "bool", grad=False, values=b.rng.random((length, length)) < 0.3)
        return f"{m}({x}, src_mask={mask})"
    return f"{m}({x})"


def norm_module(kind):
    def body(b):
        channels = b.int_in(1, 3)
        training = b.chance(0.5)
        spatial = {"BatchNorm1d": b.choice([(), (b.int_in(1, 4),)]), "BatchNorm2d": (b.int_in(1, 3), b.int_in(1, 3)),
                   "BatchNorm3d": (b.int_in(1, 2), b.int_in(1, 2), b.int_in(1, 2)),
                   "InstanceNorm1d": (b.int_in(2, 4),), "InstanceNorm2d": (b.int_in(2, 3), b.int_in(1, 3)),
                   "InstanceNorm3d": (b.int_in(1, 2), b.int_in(2, 3), b.int_in(1, 2))}[kind]
        m = _module(b, f"{kind}({channels}, affine={bool_src(b)})", mode="train" if training else "eval")
        x = b.tensor((b.int_in(2, 4), channels) + spatial, _dtype_of_last_module(b))
        return f"{m}({x})"
    return body


def layer_norm_module(b):
    shape = b.shape(min_ndim=1, max_ndim=3)
    normalized = shape[-b.int_in(1, len(shape)):]
    m = _module(b, f"LayerNorm({normalized!r}, elementwise_affine={bool_src(b)})")
    return f"{m}({b.tensor(shape, _dtype_of_last_module(b))})"


def group_norm_module(b):
    groups = b.int_in(1, 2)
    channels = groups * b.int_in(1, 2)
    m = _module(b, f"GroupNorm({groups}, {channels}, affine={bool_src(b)})")
    return f"{m}({b.tensor((b.int_in(1, 3), channels, b.int_in(1, 3)), _dtype_of_last_module(b))})"


def embedding_module(b):
    num, dim = b.int_in(2, 6), b.int_in(1, 4)
    m = _module(b, f"Embedding({num}, {dim}" + (f", padding_idx={b.int_in(0, num - 1)})" if b.chance(0.4) else ")"))
    return f"{m}({b.index_tensor(num, b.shape(max_ndim=2), allow_negative=False)})"


def rms_norm_module(b):
    shape = b.shape(min_ndim=1, max_ndim=3)
    normalized = shape[-b.int_in(1, len(shape)):]
    m = _module(b, f"RMSNorm({normalized!r}, elementwise_affine={bool_src(b)})")
    return f"{m}({b.tensor(shape, _dtype_of_last_module(b))})"


def bilinear_module(b):
    i1, i2, o = b.int_in(1, 3), b.int_in(1, 3), b.int_in(1, 3)
    m = _module(b, f"Bilinear({i1}, {i2}, {o}, bias={bool_src(b)})")
    dtype = _dtype_of_last_module(b)
    batch = b.shape(max_ndim=2, max_numel=6)
    return f"{m}({b.tensor(batch + (i1,), dtype)}, {b.tensor(batch + (i2,), dtype)})"


def prelu_module(b):
    channels = b.int_in(1, 3)
    num = b.choice([1, channels])
    m = _module(b, f"PReLU(num_parameters={num})")
    x = b.tensor((b.int_in(1, 2), channels) + b.shape(max_ndim=2, max_numel=6), _dtype_of_last_module(b))
    return f"{m}({x})"


def unflatten_module(b):
    x = b.tensor((b.int_in(1, 2), 6, b.int_in(1, 2)), b.choice(MAIN_FLOATS))
    m = _module(b, f"Unflatten(1, {b.choice(['(2, 3)', '(3, 2)', '(6, 1)', '(-1, 2)'])})")
    return f"{m}({x})"


def upsample_module(kind):
    def body(b):
        spatial = 2 if kind != "Upsample" or b.chance(0.5) else 1
        x = b.tensor((b.int_in(1, 2), b.int_in(1, 2)) + tuple(b.int_in(1, 4) for _ in range(spatial)),
                     b.choice(MAIN_FLOATS))
        size = f"size={b.int_in(1, 6)}" if b.chance(0.4) else f"scale_factor={b.choice(['2', '2.0', '3'])}"
        if kind == "Upsample":
            mode = b.choice(["'nearest'", "'linear'" if spatial == 1 else "'bilinear'"])
            extra = ", align_corners=True" if mode != "'nearest'" and b.chance(0.4) else ""
            m = _module(b, f"Upsample({size}, mode={mode}{extra})")
        else:
            m = _module(b, f"{kind}({size})")
        return f"{m}({x})"
    return body


def fractional_max_pool_module(dims):
    """With fixed ``_random_samples`` (a buffer of the module, converted with it)."""
    def body(b):
        from ._nn_functional_specs_added import _fractional_geometry
        sizes, kernel, out = _fractional_geometry(b, dims)
        batch, channels = b.int_in(1, 2), b.int_in(1, 2)
        samples = b.rng.uniform(0, 1, (batch, channels, dims)).round(3).tolist()
        size = f"output_size={out!r}" if b.chance(0.7) else f"output_ratio={round(float(b.rng.uniform(0.3, 0.9)), 2)}"
        m = _module(b, f"FractionalMaxPool{dims}d({kernel!r}, {size}, return_indices={bool_src(b)}, "
                       f"_random_samples=T.tensor({samples}))")
        return f"{m}({b.tensor((batch, channels) + sizes, _dtype_of_last_module(b))})"
    return body


MODULES = {
    "BatchNorm3d": norm_module("BatchNorm3d"), "InstanceNorm1d": norm_module("InstanceNorm1d"),
    "InstanceNorm2d": norm_module("InstanceNorm2d"), "InstanceNorm3d": norm_module("InstanceNorm3d"),
    "RMSNorm": rms_norm_module, "Bilinear": bilinear_module, "PReLU": prelu_module,
    "Unflatten": unflatten_module, "Upsample": upsample_module("Upsample"),
    "UpsamplingNearest2d": upsample_module("UpsamplingNearest2d"),
    "UpsamplingBilinear2d": upsample_module("UpsamplingBilinear2d"),
    "Linear": linear_module, "Conv1d": conv_module(1), "Conv2d": conv_module(2),
    "ConvTranspose1d": conv_module(1, True), "ConvTranspose2d": conv_module(2, True),
    "Conv3d": conv_module(3), "ConvTranspose3d": conv_module(3, True),
    "LSTM": recurrent_module("LSTM"), "GRU": recurrent_module("GRU"), "RNN": recurrent_module("RNN"),
    "LSTMCell": cell_module("LSTMCell"), "GRUCell": cell_module("GRUCell"), "RNNCell": cell_module("RNNCell"),
    "MultiheadAttention": multihead_attention, "TransformerEncoderLayer": transformer_encoder_layer,
    "BatchNorm1d": norm_module("BatchNorm1d"), "BatchNorm2d": norm_module("BatchNorm2d"),
    "LayerNorm": layer_norm_module, "GroupNorm": group_norm_module, "Embedding": embedding_module,
    "FractionalMaxPool2d": fractional_max_pool_module(2), "FractionalMaxPool3d": fractional_max_pool_module(3),
}
