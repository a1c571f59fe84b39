"""Each exported op family, one small model each: ``onnx.checker`` (full check) accepts the model and
ONNX Runtime's outputs equal gputorch's within 1e-5 (float32), with the same shapes and dtypes.
Cases with dynamic axes run the session again at other sizes than the traced ones."""
import copy
import io
import warnings

import numpy as np
import pytest

import gputorch as T

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
nn, F = T.nn, T.nn.functional


class Fn(nn.Module):
    """A model whose forward is ``fn(self, *inputs)``; ``layers`` become its submodules."""

    def __init__(self, fn, *layers):
        super().__init__()
        self.fn, self.layers = fn, nn.ModuleList(layers)

    def forward(self, *inputs):
        return self.fn(self, *inputs)


def _fn(fn, *layers):
    return Fn(fn, *layers)


def _roundtrip(model, inputs, dynamic=None, others=()):
    """Export ``model(*inputs)``, check the model, and compare ONNX Runtime with gputorch on ``inputs``
    and on each tuple of ``others`` (inputs at other sizes along the ``dynamic`` axes)."""
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    names = [f"x{i}" for i in range(len(inputs))]
    model.eval()
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # no TracerWarning: the graph does not depend on the values
        T.onnx.export(model, inputs, buf, input_names=names,
                      dynamic_axes={names[i]: axes for i, axes in (dynamic or {}).items()})
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    for case in (inputs,) + tuple(others):
        case = case if isinstance(case, tuple) else (case,)
        expected = model(*case)
        expected = expected if isinstance(expected, tuple) else (expected,)
        got = session.run(None, {n: x.numpy() for n, x in zip(names, case)})
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            e = e.detach().numpy()
            assert g.shape == e.shape and g.dtype == e.dtype
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    return proto


def _r(*shape):
    return T.randn(*shape)


# ------------------------------------------------------------------------ layers
LAYERS = {
    "linear": lambda: (nn.Linear(5, 4), _r(3, 5)),
    "linear-3d-no-bias": lambda: (nn.Linear(5, 4, bias=False), _r(2, 3, 5)),
    "conv2d-groups-dilation-stride": lambda: (nn.Conv2d(4, 6, 3, groups=2, dilation=2, padding=1, stride=2),
                                              _r(2, 4, 9, 9)),
    "conv2d-same": lambda: (nn.Conv2d(3, 4, 3, padding="same"), _r(2, 3, 8, 8)),
    "conv1d-replicate": lambda: (nn.Conv1d(4, 5, 3, padding=2, padding_mode="replicate"), _r(2, 4, 10)),
    "conv1d-circular": lambda: (nn.Conv1d(4, 5, 3, padding=1, padding_mode="circular"), _r(2, 4, 10)),
    "conv2d-reflect": lambda: (nn.Conv2d(3, 5, 3, padding=1, padding_mode="reflect"), _r(2, 3, 8, 8)),
    "conv2d-replicate": lambda: (nn.Conv2d(3, 5, 3, padding=(1, 2), padding_mode="replicate"), _r(2, 3, 8, 8)),
    "conv2d-circular": lambda: (nn.Conv2d(3, 5, 3, padding=1, padding_mode="circular"), _r(2, 3, 8, 8)),
    "conv-transpose2d": lambda: (nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1),
                                 _r(2, 3, 5, 5)),
    "batchnorm2d": lambda: (nn.BatchNorm2d(3), _r(2, 3, 4, 4)),
    "layernorm": lambda: (nn.LayerNorm(10), _r(2, 4, 10)),
    "groupnorm-4d": lambda: (nn.GroupNorm(3, 6), _r(2, 6, 4, 5)),
    "groupnorm-no-affine": lambda: (nn.GroupNorm(2, 4, affine=False), _r(2, 4, 7)),
    "dropout-eval": lambda: (nn.Dropout(0.5), _r(3, 6)),
    "maxpool1d": lambda: (nn.MaxPool1d(3, 2, 1), _r(2, 4, 10)),
    "maxpool2d": lambda: (nn.MaxPool2d(2), _r(2, 3, 8, 8)),
    "maxpool2d-ceil": lambda: (nn.MaxPool2d(3, 2, ceil_mode=True), _r(2, 3, 8, 8)),
    "avgpool1d": lambda: (nn.AvgPool1d(3, 2, 1), _r(2, 4, 10)),
    "avgpool2d": lambda: (nn.AvgPool2d(2), _r(2, 3, 8, 8)),
    "adaptive-avgpool2d": lambda: (nn.AdaptiveAvgPool2d((2, 4)), _r(2, 3, 8, 8)),
    "adaptive-avgpool1d": lambda: (nn.AdaptiveAvgPool1d(1), _r(2, 4, 10)),
    "embedding": lambda: (nn.Embedding(10, 4), T.randint(0, 10, (2, 5))),
    "softmax": lambda: (nn.Softmax(1), _r(3, 6)),
    "log-softmax": lambda: (nn.LogSoftmax(-1), _r(3, 6)),
}

ACTIVATIONS = {
    "relu": nn.ReLU(), "gelu": nn.GELU(), "gelu-tanh": nn.GELU("tanh"), "silu": nn.SiLU(),
    "leaky-relu": nn.LeakyReLU(0.1), "elu": nn.ELU(0.7), "selu": nn.SELU(), "celu": nn.CELU(0.5),
    "hardtanh": nn.Hardtanh(-0.5, 0.8), "relu6": nn.ReLU6(), "softplus": nn.Softplus(),
    "softplus-beta-threshold": nn.Softplus(2.0, 1.0), "mish": nn.Mish(), "hardswish": nn.Hardswish(),
    "hardsigmoid": nn.Hardsigmoid(), "sigmoid": nn.Sigmoid(), "tanh": nn.Tanh(), "softsign": nn.Softsign(),
    "log-sigmoid": nn.LogSigmoid(), "prelu": nn.PReLU(), "tanhshrink": nn.Tanhshrink(),
    "softshrink": nn.Softshrink(), "hardshrink": nn.Hardshrink(), "glu": nn.GLU(), "threshold": nn.Threshold(0.1, 20.0),
    "softmin": nn.Softmin(1),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer(name):
    T.manual_seed(0)
    model, x = LAYERS[name]()
    if name == "batchnorm2d":
        with T.no_grad():
            model.running_mean.uniform_(-0.5, 0.5)
            model.running_var.uniform_(0.5, 2.0)
    _roundtrip(model, x)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation(name):
    T.manual_seed(0)
    _roundtrip(ACTIVATIONS[name], T.randn(3, 6) * 3)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_float64(name):
    """ONNX Runtime runs some ONNX activations in float32 only; the exported forms run in float64."""
    T.manual_seed(0)
    _roundtrip(copy.deepcopy(ACTIVATIONS[name]).double(), T.randn(3, 6, dtype=T.float64) * 3)


def test_float64_layers():
    T.manual_seed(0)
    model = nn.Sequential(nn.GroupNorm(3, 3), nn.GELU(), nn.Flatten(), nn.Linear(15, 6), nn.LayerNorm(6)).double()
    _roundtrip(model, T.randn(2, 3, 5, dtype=T.float64))      # (ONNX Runtime's CPU Conv is float32 only)


def test_prelu_per_channel():
    T.manual_seed(0)
    model = nn.PReLU(4)
    with T.no_grad():
        model.weight.uniform_(-1, 1)
    _roundtrip(model, _r(2, 4, 5))


def test_conv1d_reflect_with_dynamic_batch_and_length():
    T.manual_seed(0)
    model = nn.Sequential(nn.Conv1d(4, 5, 3, padding=1, padding_mode="reflect"), nn.GroupNorm(1, 5), nn.ReLU())
    _roundtrip(model, _r(2, 4, 10), {0: [0, 2]}, [_r(3, 4, 7), _r(1, 4, 16)])


def test_groupnorm_with_dynamic_batch_and_length():
    T.manual_seed(0)
    model = nn.GroupNorm(2, 6)
    with T.no_grad():
        model.weight.uniform_(0.5, 1.5)
        model.bias.uniform_(-0.5, 0.5)
    _roundtrip(model, _r(2, 6, 5), {0: [0, 2]}, [_r(4, 6, 9)])


# ------------------------------------------------------------------------ recurrent layers
class _StackedRnn(nn.Module):
    def __init__(self, nonlinearity, bidirectional=False):
        super().__init__()
        self.rnn = nn.RNN(4, 6, 3, nonlinearity=nonlinearity, batch_first=True, bidirectional=bidirectional)
        self.head = nn.Linear(12 if bidirectional else 6, 2)

    def forward(self, x, h):
        out, h_n = self.rnn(x, h)
        return self.head(out), h_n


@pytest.mark.parametrize("nonlinearity,bidirectional", [("tanh", False), ("relu", True)])
def test_rnn_layers_with_state_and_dynamic_sequence(nonlinearity, bidirectional):
    T.manual_seed(0)
    model, layers = _StackedRnn(nonlinearity, bidirectional), 6 if bidirectional else 3
    proto = _roundtrip(model, (_r(2, 5, 4), _r(layers, 2, 6)), {0: [0, 1], 1: [1]},
                       [(_r(3, 9, 4), _r(layers, 3, 6)), (_r(1, 1, 4), _r(layers, 1, 6))])
    assert [n.op_type for n in proto.graph.node].count("RNN") == layers


def test_rnn_trace_replays_with_gradients():
    T.manual_seed(0)
    model = nn.RNN(3, 4, 2).double()
    x = T.randn(5, 2, 3, dtype=T.float64, requires_grad=True)
    traced = T.jit.trace(model, (x,))
    assert T.autograd.gradcheck(lambda v: traced(v)[0], (x,))
    assert T.autograd.gradgradcheck(lambda v: traced(v)[0], (x,))
    assert T.allclose(traced(x)[1], model(x)[1])
    traced(x)[0].sum().backward()          # .grad holds plain tensors, not a graph
    assert not model.weight_hh_l0.grad.requires_grad


# ------------------------------------------------------------------------ attention
def test_sdpa_masks():
    T.manual_seed(0)
    q, k, v = _r(2, 2, 5, 4), _r(2, 2, 6, 4), _r(2, 2, 6, 4)
    _roundtrip(_fn(lambda s, q, k, v: F.scaled_dot_product_attention(q, k, v)), (q, k, v))
    bool_mask = T.rand(5, 6) > 0.3
    bool_mask[1] = False                   # a row with no key: zeros, as in gputorch
    _roundtrip(_fn(lambda s, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)),
               (q, k, v, bool_mask))
    _roundtrip(_fn(lambda s, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3)),
               (q, k, v, _r(5, 6)))


def test_sdpa_causal_with_dynamic_batch_and_sequence():
    T.manual_seed(0)
    model = _fn(lambda s, q: F.scaled_dot_product_attention(q, q * 2, q - 1, is_causal=True))
    _roundtrip(model, _r(2, 2, 5, 4), {0: [0, 2]}, [_r(3, 2, 9, 4), _r(1, 2, 1, 4)])


def test_multihead_attention_with_masks_and_weights():
    T.manual_seed(0)
    attention = nn.MultiheadAttention(8, 2)
    mask = T.ones(5, 5, dtype=T.bool).triu(1)
    _roundtrip(_fn(lambda s, q: s.layers[0](q, q, q, attn_mask=mask), attention), _r(5, 2, 8))
    padding = T.tensor([[False] * 5, [False] * 3 + [True] * 2])
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2)
    _roundtrip(_fn(lambda s, x, m: s.layers[0](x, src_key_padding_mask=m), encoder), (_r(2, 5, 8), padding))


class _GptBlock(nn.Module):
    """A GPT decoder whose attention is ``F.scaled_dot_product_attention(..., is_causal=True)``."""

    def __init__(self, vocab=40, width=32, heads=4, context=16):
        super().__init__()
        self.heads = heads
        self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(context, width)
        self.ln1, self.ln2, self.ln_f = nn.LayerNorm(width), nn.LayerNorm(width), nn.LayerNorm(width)
        self.attn, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(approximate="tanh"), nn.Linear(4 * width, width),
                                 nn.Dropout(0.1))
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, idx):
        b, t = idx.size()
        x = self.tok(idx) + self.pos(T.arange(0, t, dtype=T.long, device=idx.device))
        q, k, v = self.attn(self.ln1(x)).split(x.size(-1), dim=2)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, -1))
        x = x + self.mlp(self.ln2(x))
        return self.head(self.ln_f(x))


def test_gpt_with_sdpa_is_causal_dynamic_batch_and_sequence():
    T.manual_seed(0)
    _roundtrip(_GptBlock(), T.randint(0, 40, (2, 8)), {0: [0, 1]},
               [T.randint(0, 40, (5, 16)), T.randint(0, 40, (3, 3)), T.randint(0, 40, (1, 1))])


# ------------------------------------------------------------------------ tensor ops
def _i(low, high, *shape):
    return T.randint(low, high, shape)


TENSOR_OPS = {
    "matmul-broadcast": (lambda s, a, b: (a @ b, T.bmm(a, b.expand(2, 4, 5)), T.mm(a[0], b), a[1] @ b[:, 0]),
                         (_r(2, 3, 4), _r(4, 5))),
    "addmm": (lambda s, a, b, c: T.addmm(a, b, c, beta=0.5, alpha=2.0), (_r(3, 5), _r(3, 4), _r(4, 5))),
    "addmm-beta0": (lambda s, a, b, c: T.addmm(a, b, c, beta=0), (_r(3, 5), _r(3, 4), _r(4, 5))),
    "baddbmm": (lambda s, a, b, c: T.baddbmm(a, b, c, beta=0.5, alpha=2.0), (_r(2, 3, 5), _r(2, 3, 4), _r(2, 4, 5))),
    "reshape-permute-flatten": (lambda s, x: x.reshape(3, 2, 5).permute(2, 0, 1).transpose(0, 1).flatten(1)
                                .unsqueeze(0).squeeze(0).view(-1, 10).expand(2, 3, 10), _r(6, 5)),
    "slicing": (lambda s, x: x[1:, ::2, None, 2] + x[1:, -1:, None, 0:1].squeeze(-1), _r(4, 5, 6)),
    "negative-index-narrow": (lambda s, x: x[-1] * x[:, -2] + x.narrow(1, 1, 2).sum(1), _r(4, 4)),
    "unflatten-unbind": (lambda s, x: (x.unflatten(1, (2, 3)), *x.unbind(0)), _r(4, 6)),
    "cat-stack": (lambda s, a, b: T.cat([T.stack([a, b], 1), T.stack([b, a], -1).transpose(1, 2)], 0),
                  (_r(3, 5), _r(3, 5))),
    "split-chunk": (lambda s, x: tuple(x.split([1, 2], 0)) + tuple(x.chunk(2, 1)) + tuple(x.split(2, 1)), _r(3, 5)),
    "arithmetic-broadcast": (lambda s, a, b: (a + b * 2 - 1) / (b.abs() + 1) ** 2 + 3 - a + 2 ** a - 1 / (b.abs() + 1),
                             (_r(3, 1, 4), _r(5, 1))),
    "promotion-int-float": (lambda s, a, b: (a + b, a * 2.5, a / 2, a - 1, b > a), (_i(0, 5, 3, 4), _r(3, 4))),
    "int-true-division": (lambda s, a, b: a / b, (_i(1, 5, 3, 4), _i(1, 5, 3, 4))),
    "floor-divide": (lambda s, a, b: (a // b, a.div(b, rounding_mode="trunc"), a % b),
                     (_i(-9, 9, 3, 4), _i(1, 5, 3, 4))),
    "float-floor-remainder": (lambda s, a: (a // 0.5, a % 0.7, a.div(0.3, rounding_mode="trunc")), _r(3, 4)),
    "unary-math": (lambda s, a: a.exp().log() + a.sin() + a.cos() + a.abs().sqrt() + a.sign() + a.floor()
                   + a.ceil() + a.round() + a.abs().rsqrt() + a.square() + a.tan() + a.erf(), _r(3, 5)),
    "maximum-minimum": (lambda s, a, b: T.maximum(a, b) + T.minimum(a, b), (_r(3, 5), _r(5))),
    "comparison-logic": (lambda s, a, b: ((a > b) & (a < 1)) | (a == b) | (a != 0) ^ (a >= b) | ~(a <= 0)
                         | a.isnan() | a.isinf(), (_r(3, 5), _r(3, 5))),
    "where": (lambda s, a, b: (T.where(a > 0, a, b), T.where(a > 0, a, 0.0)), (_r(3, 5), _r(1, 5))),
    "masked-fill": (lambda s, a: (a.masked_fill(a < 0, float("-inf")).softmax(-1), a.clone().masked_fill_(a < 0, 1.5)),
                    _r(3, 5)),
    "clamp": (lambda s, a: a.clamp(-0.5, 0.7) + a.clamp(min=0.1) + a.clamp(max=0.2) + a.clamp_min(0)
              + a.clamp_max(0.1), _r(3, 5)),
    "clamp-tensor-bounds": (lambda s, a, b: a.clamp(min=b) + a.clamp(b, b + 0.5), (_r(3, 5), _r(5))),
    "clamp-int": (lambda s, a: a.clamp(0, 3), _i(-5, 5, 3, 4)),
    "casts": (lambda s, a: (a.long(), a.int().float() + a.double().float() + a.bool().float() + a.half().float(),
                            a.to(T.float64)), _r(3, 5) * 3),
    "sum-mean": (lambda s, a: (a.sum(1), a.sum((0, 2), keepdim=True), a.mean(-1, keepdim=True), a.sum(), a.mean()),
                 _r(2, 4, 5)),
    "max-min": (lambda s, a: (a.max(), a.min(), *a.max(1), a.max(1, keepdim=True)[0], *a.min(-1)), _r(2, 4, 5)),
    "amax-amin-prod": (lambda s, a: (a.amax((1, 2)), a.amin(1, keepdim=True), a.prod(1), a.prod()), _r(2, 3, 4)),
    "argmax-argmin": (lambda s, a: (a.argmax(1), a.argmax(), a.argmin(-1, keepdim=True)), _r(2, 4, 5)),
    "all-any": (lambda s, a: ((a > 0).all(1), (a > 1).any(1), (a > -3).all(), a.any(-1, keepdim=True)), _r(3, 5)),
    "var-std-logsumexp": (lambda s, a: (a.var(1), a.std(-1, keepdim=True), a.var(unbiased=False), a.logsumexp(1)),
                          _r(2, 4, 5)),
    "cumsum": (lambda s, a, n: (a.cumsum(1), T.cumsum(a, dim=-1), n.cumsum(0), n.cumsum(1, dtype=T.float32)),
               (_r(2, 4, 5), _i(-3, 3, 4, 3))),
    "topk-sort": (lambda s, a: (*a.topk(3, dim=-1), *T.topk(a, 2, dim=1, largest=False), *a.sort(-1),
                                *a.sort(1, descending=True)), _r(2, 4, 5)),
    "tril-triu": (lambda s, a: a.tril() + a.triu(1) + a.tril(-1), _r(2, 4, 4)),
    "repeat-flip": (lambda s, a: (a.repeat(2, 3), a.repeat(2, 1, 1), a.flip(1), a.flip(0, -1)), _r(3, 5)),
    "pad": (lambda s, a: (F.pad(a, (1, 2)), F.pad(a, (1, 2, 0, 1), value=0.5), F.pad(a, (-1, 1)),
                          F.pad(a, (2, 1), mode="reflect"), F.pad(a, (2, 1), mode="replicate"),
                          F.pad(a, (2, 1), mode="circular")), _r(2, 4, 6)),
    "lerp": (lambda s, a, b: T.lerp(a, b, 0.3), (_r(3, 5), _r(3, 5))),
    "addcmul-addcdiv": (lambda s, a, b, c: T.addcmul(a, b, c, value=0.5) + T.addcdiv(a, b, c.abs() + 1, value=2),
                        (_r(3, 5), _r(3, 5), _r(1, 5))),
    "einsum": (lambda s, a, b: (T.einsum("bij,bjk->bik", a, b), T.einsum("bij->j", a)), (_r(2, 3, 4), _r(2, 4, 5))),
    "vector-norms": (lambda s, a: (F.normalize(a, dim=-1), a.norm(dim=1), T.linalg.vector_norm(a, 1, dim=0),
                                   a.norm(), T.linalg.vector_norm(a, float("inf"), dim=1, keepdim=True),
                                   T.linalg.vector_norm(a, 3, dim=1), T.linalg.vector_norm(a.relu(), 0, dim=1)),
                     _r(3, 5)),
    "roll": (lambda s, a: (a.roll(1, 1), a.roll((2, -1), (0, 1)), a.roll(7), a.roll(-6, 1)), _r(3, 5)),
}


@pytest.mark.parametrize("name", sorted(TENSOR_OPS))
def test_tensor_op(name):
    T.manual_seed(0)
    fn, inputs = TENSOR_OPS[name]
    _roundtrip(_fn(fn), inputs)


def test_ops_along_a_dynamic_axis():
    """Sizes that a dynamic axis changes are read at run time: cumsum, topk, sort, var, flip, roll,
    tril, circular padding and a filled mask along the sequence axis."""
    T.manual_seed(0)

    def fn(s, x):
        t = x.shape[1]
        scan = x.cumsum(1) + x.flip(1) + x.roll(2, 1) + F.pad(x.transpose(1, 2), (1, 2), mode="circular")[..., 1:-2].transpose(1, 2)
        values, indices = x.topk(2, dim=-1)
        mask = T.ones(t, t, dtype=T.bool).tril()
        return scan, values, indices, x.sort(1)[0], x.var(1), x.masked_fill(~mask[:, :3], 0.0), x.tril()
    _roundtrip(_fn(fn), _r(2, 5, 3), {0: [0, 1]}, [_r(3, 8, 3), _r(1, 4, 3)])


def test_unsupported_op_names_itself():
    with pytest.raises(T.onnx.UnsupportedOperatorError, match="'Cumprod'.*opset version 17.*'<top>'"):
        T.onnx.export(_fn(lambda s, x: x.cumprod(1)), _r(2, 3), io.BytesIO())


def test_values_the_model_does_not_return_are_not_exported():
    """A loss computed beside the logits (nanoGPT's forward with targets) has no translation, but is
    not part of what the model returns, so the export leaves it out."""
    class WithLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(4, 3)

        def forward(self, x, target):
            logits = self.head(x)
            self.loss = F.cross_entropy(logits, target)
            return logits
    proto = _roundtrip(WithLoss(), (_r(5, 4), T.randint(0, 3, (5,))))
    assert "cross" not in str([n.op_type for n in proto.graph.node]).lower()


def test_expand_of_a_learned_state_to_the_dynamic_batch():
    """makemore's RNN: a ``(1, H)`` start state expanded to ``(b, -1)`` and concatenated with the input."""
    class Start(nn.Module):
        def __init__(self):
            super().__init__()
            self.start = nn.Parameter(T.randn(1, 3))

        def forward(self, x):
            return T.cat([x, self.start.expand((x.size(0), -1))], dim=1)
    _roundtrip(Start(), _r(2, 4), {0: [0]}, [_r(5, 4), _r(1, 4)])


class _Lookups(nn.Module):
    """Index tensors computed from the input: ``w[i]``, ``index_select``, ``gather``, a constant list."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(T.randn(6, 3))

    def forward(self, i):
        return (self.w[i], self.w.index_select(0, i), self.w.gather(0, i[:, None].expand(-1, 3) % 6),
                self.w[:, [0, 2]], self.w[..., i % 3], self.w[1:][i % 5], self.w[:, i % 3])


def test_integer_tensor_indexing_with_a_dynamic_index_length():
    T.manual_seed(0)
    _roundtrip(_Lookups(), T.tensor([0, 1, 5]), {0: [0]}, [T.tensor([4, 2, 2, 0, 3]), T.tensor([5])])


def _assignments(s, i, v, x):
    i = i.clone()
    i[:, 0] = 7                       # makemore's MLP: the first token becomes <BLANK>
    j = i.roll(1, 1)
    j[:, 1:3] = v
    y = x * 1
    y[:, 1, 2:] = 0.5
    y[..., -1] += 1.0
    return i, j, y


def test_assignment_through_a_basic_index_with_a_dynamic_batch():
    T.manual_seed(0)
    inputs = (T.randint(0, 5, (3, 4)), T.randint(0, 5, (3, 2)), _r(3, 3, 5))
    _roundtrip(_fn(_assignments), inputs, {0: [0], 1: [0], 2: [0]},
               [(T.randint(0, 5, (6, 4)), T.randint(0, 5, (6, 2)), _r(6, 3, 5))])


def test_mask_and_multi_tensor_indexes_are_refused():
    with pytest.raises(T.onnx.UnsupportedOperatorError, match="boolean mask"):
        T.onnx.export(_fn(lambda s, x: x[x > 0]), _r(5, 3), io.BytesIO())
    with pytest.raises(T.onnx.UnsupportedOperatorError, match="one index tensor"):
        T.onnx.export(_fn(lambda s, x, i: x[i, i]), (_r(5, 5), T.tensor([0, 1])), io.BytesIO())


@pytest.mark.skipif(not T.cuda.is_available(), reason="CUDA is not available")
def test_export_from_cuda():
    """A model on the CUDA device exports the same graph (initializers and constant indexes copied
    to the host); ONNX Runtime on the CPU matches it."""
    T.manual_seed(0)
    for model, inputs in ((_GptBlock(), T.randint(0, 40, (2, 8))), (_Lookups(), T.tensor([0, 1, 5]))):
        model = model.cuda().eval()
        buf = io.BytesIO()
        T.onnx.export(model, (inputs.cuda(),), buf, input_names=["x"], dynamic_axes={"x": [0]})
        session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
        expected = model(inputs.cuda())
        expected = expected if isinstance(expected, tuple) else (expected,)
        for got, e in zip(session.run(None, {"x": inputs.numpy()}), expected):
            np.testing.assert_allclose(got, e.detach().cpu().numpy(), rtol=1e-5, atol=1e-5)
