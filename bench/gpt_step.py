"""A GPT-style decoder training step (issue 15's headline target), the same code for gputorch and
PyTorch: token and position embeddings, pre-norm blocks of causal self-attention (a fused QKV
projection, a lower-triangular mask filled with -inf, softmax, dropout 0) and an MLP with the exact
GELU, a final LayerNorm, tied output weights, cross-entropy, AdamW with weight decay.

Two sizes: small (2 layers, 64 wide, 4 heads, context 64, batch 8), where per-op overhead
dominates, and larger (4 layers, 256 wide, 8 heads, context 128, batch 16), where the arithmetic
does; plus LSTM and GRU language-model steps (2 layers, 256 wide, sequence 64, batch 16).

Run alone: ``python bench/gpt_step.py [--device cpu|cuda] [--quick]``.
"""
import math
import os
import sys

if __package__ in (None, ""):
    sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.path.dirname(__file__)]

from timing import format_table, run_alone, run_cases  # noqa: E402

TITLE = "Language-model training steps (microseconds per step, median of repeats)"


def _gpt(fw, vocab, width, layers, heads, context):
    nn, F = fw.nn, fw.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(width, 3 * width)
            self.proj = nn.Linear(width, width)
            self.register_buffer("mask", fw.tril(fw.ones(context, context)).view(1, 1, context, context))

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.qkv(x).split(width, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
            return self.proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.attn = Attention()
            self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
            self.gelu = nn.GELU()

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.out(self.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(context, width)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)
            self.head.weight = self.tok.weight

        def forward(self, idx, targets):
            t = idx.size(1)
            x = self.tok(idx) + self.pos(fw.arange(t, device=idx.device))
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    return GPT()


def gpt_step(fw, device, width, layers, heads, context, batch, vocab=65):
    import numpy as np
    fw.manual_seed(0)
    model = _gpt(fw, vocab, width, layers, heads, context).to(device)
    opt = fw.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    rng = np.random.default_rng(0)
    idx = fw.tensor(rng.integers(0, vocab, (batch, context)), device=device)
    targets = fw.tensor(rng.integers(0, vocab, (batch, context)), device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        model(idx, targets).backward()
        opt.step()
    return step


def lstm_lm_step(fw, device, width=256, layers=2, seq=64, batch=16, vocab=65, cell="LSTM"):
    """Embedding, a 2-layer LSTM (or GRU) with its hidden state, a linear decoder, cross-entropy, Adam."""
    import numpy as np
    nn, F = fw.nn, fw.nn.functional
    fw.manual_seed(0)
    embed, lstm, head = nn.Embedding(vocab, width), getattr(nn, cell)(width, width, layers, batch_first=True), \
        nn.Linear(width, vocab)
    modules = nn.ModuleList([embed, lstm, head]).to(device)
    opt = fw.optim.Adam(modules.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    idx = fw.tensor(rng.integers(0, vocab, (batch, seq)), device=device)
    targets = fw.tensor(rng.integers(0, vocab, (batch, seq)), device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        out, _ = lstm(embed(idx))
        F.cross_entropy(head(out).reshape(-1, vocab), targets.reshape(-1)).backward()
        opt.step()
    return step


CASES = [
    ("GPT small: 2 layers, width 64, 4 heads, context 64, batch 8", gpt_step,
     dict(width=64, layers=2, heads=4, context=64, batch=8)),
    ("GPT larger: 4 layers, width 256, 8 heads, context 128, batch 16", gpt_step,
     dict(width=256, layers=4, heads=8, context=128, batch=16)),
    ("LSTM LM: 2 layers, width 256, sequence 64, batch 16", lstm_lm_step, {}),
    ("GRU LM: 2 layers, width 256, sequence 64, batch 16", lstm_lm_step, dict(cell="GRU")),
]


def run(device="cpu", quick=False):
    return run_cases(CASES, device, quick)


def main(argv=None):
    run_alone(TITLE, run, format_table, argv)


if __name__ == "__main__":
    main()
