"""``gputorch.onnx.export`` checked by ONNX's checker and ONNX Runtime: an MLP, a 1-D CNN of the
MNIST-1D kind, an LSTM language model with its hidden state, a bidirectional GRU, a Transformer
encoder classifier and a GPT-style decoder give ONNX Runtime outputs equal to gputorch's within 1e-5 (float32), also at batch
sizes and sequence lengths other than the traced ones; unsupported ops and sizes fail with errors
that name the op, its module and the opset."""
import io
import math

import numpy as np
import pytest

import gputorch as T

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
F = T.nn.functional


def _session(model, args, **kwargs):
    buf = io.BytesIO()
    T.onnx.export(model, args, buf, **kwargs)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    onnx.shape_inference.infer_shapes(proto, strict_mode=True)
    return ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])


def _check(session, model, inputs, names):
    expected = model(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = session.run(None, {n: x.numpy() for n, x in zip(names, inputs)})
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == tuple(e.shape)
        np.testing.assert_allclose(g, e.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_mlp_with_dynamic_batch():
    T.manual_seed(0)
    model = T.nn.Sequential(T.nn.Linear(6, 16), T.nn.ReLU(), T.nn.Dropout(0.3), T.nn.Linear(16, 4), T.nn.Softmax(-1))
    model.train()           # export switches to eval mode and back
    session = _session(model, T.randn(2, 6), input_names=["x"], output_names=["y"],
                       dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    assert model.training
    model.eval()
    for batch in (2, 7):
        _check(session, model, (T.randn(batch, 6),), ["x"])


def test_mnist1d_cnn():
    T.manual_seed(0)
    model = T.nn.Sequential(T.nn.Conv1d(1, 8, 5, padding=2), T.nn.GELU(), T.nn.MaxPool1d(2), T.nn.BatchNorm1d(8),
                            T.nn.Conv1d(8, 8, 3, groups=2, dilation=2, padding=2), T.nn.SiLU(), T.nn.AvgPool1d(2),
                            T.nn.Flatten(), T.nn.Linear(8 * 10, 10), T.nn.LogSoftmax(-1)).eval()
    with T.no_grad():
        model[3].running_mean.uniform_(-0.5, 0.5)
        model[3].running_var.uniform_(0.5, 2.0)
    session = _session(model, T.randn(2, 1, 40), input_names=["x"], dynamic_axes={"x": [0]})
    for batch in (2, 9):
        _check(session, model, (T.randn(batch, 1, 40),), ["x"])


class _LanguageModel(T.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = T.nn.Embedding(20, 8)
        self.rnn = T.nn.LSTM(8, 16, 2, batch_first=True)
        self.head = T.nn.Linear(16, 20)

    def forward(self, idx, h, c):
        out, (h2, c2) = self.rnn(self.emb(idx), (h, c))
        return self.head(out), h2, c2


def test_lstm_language_model_with_state():
    T.manual_seed(0)
    model = _LanguageModel().eval()
    names = ["idx", "h", "c"]
    session = _session(model, (T.randint(0, 20, (3, 5)), T.randn(2, 3, 16), T.randn(2, 3, 16)), input_names=names,
                       dynamic_axes={"idx": {0: "batch", 1: "seq"}, "h": {1: "batch"}, "c": {1: "batch"}})
    for batch, seq in ((3, 5), (4, 11)):
        _check(session, model, (T.randint(0, 20, (batch, seq)), T.randn(2, batch, 16), T.randn(2, batch, 16)), names)


class _GruTagger(T.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = T.nn.Embedding(20, 8)
        self.rnn = T.nn.GRU(8, 16, 2, batch_first=True, bidirectional=True)
        self.head = T.nn.Linear(32, 20)

    def forward(self, idx, h):
        out, h2 = self.rnn(self.emb(idx), h)
        return self.head(out), h2


def test_bidirectional_gru_with_state():
    T.manual_seed(0)
    model = _GruTagger().eval()
    session = _session(model, (T.randint(0, 20, (3, 5)), T.randn(4, 3, 16)), input_names=["idx", "h"],
                       dynamic_axes={"idx": [0, 1], "h": [1]})
    for batch, seq in ((3, 5), (2, 9)):
        _check(session, model, (T.randint(0, 20, (batch, seq)), T.randn(4, batch, 16)), ["idx", "h"])


class _EncoderClassifier(T.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = T.nn.Embedding(30, 32)
        layer = T.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True, activation="gelu")
        self.enc = T.nn.TransformerEncoder(layer, 2)
        self.head = T.nn.Linear(32, 5)

    def forward(self, idx):
        return self.head(self.enc(self.emb(idx)).mean(1))


def test_transformer_encoder_classifier():
    T.manual_seed(0)
    model = _EncoderClassifier().eval()
    session = _session(model, T.randint(0, 30, (3, 7)), input_names=["idx"],
                       dynamic_axes={"idx": {0: "batch", 1: "seq"}})
    for batch, seq in ((3, 7), (5, 12)):
        _check(session, model, (T.randint(0, 30, (batch, seq)),), ["idx"])


class _Decoder(T.nn.Module):
    """A GPT-style block: fused QKV, a causal mask buffer filled with -inf, exact GELU, tied LayerNorm."""

    def __init__(self, vocab=40, width=32, heads=4, context=16):
        super().__init__()
        self.heads = heads
        self.tok, self.pos = T.nn.Embedding(vocab, width), T.nn.Embedding(context, width)
        self.ln = T.nn.LayerNorm(width)
        self.qkv, self.proj = T.nn.Linear(width, 3 * width), T.nn.Linear(width, width)
        self.fc, self.out, self.head = T.nn.Linear(width, 4 * width), T.nn.Linear(4 * width, width), \
            T.nn.Linear(width, vocab)
        self.register_buffer("mask", T.tril(T.ones(context, context)).view(1, 1, context, context))

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok(idx) + self.pos(T.arange(t))
        q, k, v = self.qkv(self.ln(x)).split(x.size(2), dim=2)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = F.softmax(att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf")), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).contiguous().view(b, t, -1))
        x = x + self.out(F.gelu(self.fc(self.ln(x))))
        return self.head(self.ln(x))


def test_gpt_decoder_with_dynamic_batch_and_sequence():
    T.manual_seed(0)
    model = _Decoder().eval()
    session = _session(model, T.randint(0, 40, (2, 8)), input_names=["idx"], dynamic_axes={"idx": [0, 1]})
    for batch, seq in ((2, 8), (5, 16), (3, 3)):      # arange(t) and mask[:t, :t] follow the sequence axis
        _check(session, model, (T.randint(0, 40, (batch, seq)),), ["idx"])


def test_filled_tensors_made_from_sizes_follow_dynamic_axes():
    class Masked(T.nn.Module):
        def forward(self, x):
            t = x.shape[1]
            return x.masked_fill(T.ones(t, t).triu(1).bool(), 0.0)   # ones(): one value, read-at-run-time shape
    session = _session(Masked(), T.randn(2, 4, 4), input_names=["x"], dynamic_axes={"x": [1, 2]})
    for t in (4, 7):
        _check(session, Masked(), (T.randn(2, t, t),), ["x"])


def test_untraced_tensors_made_from_sizes_are_refused():
    class Scaled(T.nn.Module):
        def forward(self, x):
            return x * T.eye(x.shape[1])       # eye() is not a traced op, nor filled with one value
    with pytest.raises(T.onnx.UnsupportedOperatorError, match="used by 'Mul' in module '<top>'"):
        T.onnx.export(Scaled(), T.randn(2, 4, 4), io.BytesIO(), dynamic_axes={"input0": [1, 2]})


def test_file_path_and_unsupported_op(tmp_path):
    model = T.nn.Sequential(T.nn.Linear(3, 3), T.nn.Tanh())
    path = tmp_path / "m.onnx"
    T.onnx.export(model, T.randn(1, 3), str(path))
    assert onnx.load(str(path)).opset_import[0].version == 17
    class Running(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = T.nn.Linear(3, 3)

        def forward(self, x):
            return self.inner(x).cumprod(1)
    with pytest.raises(T.onnx.UnsupportedOperatorError,
                       match="operator 'Cumprod'.*opset version 17.*in module '<top>'"):
        T.onnx.export(Running(), T.randn(2, 3), io.BytesIO())
    with pytest.raises(ValueError, match="opset 17 only"):
        T.onnx.export(model, T.randn(1, 3), io.BytesIO(), opset_version=13)
