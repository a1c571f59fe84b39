"""A character-level transformer language model, with gradient checkpointing on or off, under the
memory profiler.

The model reads ``seq_len`` characters and predicts each next one: a token embedding plus a
learned position embedding, ``layers`` pre-norm ``nn.TransformerEncoderLayer`` blocks with a
causal mask, a final LayerNorm and a linear head over the vocabulary. With ``checkpoint=True``
each block runs under ``gputorch.utils.checkpoint.checkpoint(..., use_reentrant=False)``: its
inner activations are not kept for backward but recomputed, so the activation peak drops from
all blocks' intermediates to roughly one block's plus the block inputs. The losses are the same
either way: dropout is 0 by default, and with ``--dropout`` the checkpoint restores the random
state for the recomputation, so the recomputed masks are the ones of the first forward pass.

The text is any file (``--text``); by default, the docstrings of gputorch's own modules: English
prose written for this project, installed with the package and so present offline on every
machine (about 250,000 characters).

    python -m gputorch.examples.char_transformer --checkpoint both --steps 200
"""
import argparse
import importlib
import os
import pkgutil
import sys
import time

import numpy as np

import gputorch as torch
from gputorch import nn
from gputorch.examples.curves import TENSORBOARD_HELP, Curves
from gputorch.utils.checkpoint import checkpoint as checkpoint_block


def default_text():
    """The docstrings of every gputorch module, class and function, joined by blank lines."""
    import gputorch
    parts = []
    for info in sorted(pkgutil.walk_packages(gputorch.__path__, "gputorch."), key=lambda i: i.name):
        if ".examples" in info.name or info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:  # optional dependencies (CuPy, ...) of a few modules
            continue
        parts.append(module.__doc__ or "")
        for value in vars(module).values():
            if getattr(value, "__module__", None) == info.name and getattr(value, "__doc__", None):
                parts.append(value.__doc__)
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


class CharData:
    """A text as integer codes: ``vocab`` (sorted characters), ``codes`` (int64 array)."""

    def __init__(self, text):
        self.vocab = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.vocab)}
        self.codes = np.array([self.index[c] for c in text], dtype=np.int64)

    def batch(self, rng, batch_size, seq_len):
        """Inputs and next-character targets, both int64 of shape ``(batch_size, seq_len)``."""
        starts = rng.integers(0, len(self.codes) - seq_len - 1, batch_size)
        window = self.codes[starts[:, None] + np.arange(seq_len + 1)]
        return window[:, :-1], window[:, 1:]

    def decode(self, codes):
        return "".join(self.vocab[int(i)] for i in codes)


class CharTransformer(nn.Module):
    """``(batch, T)`` character codes, ``T <= seq_len`` -> ``(batch, T, vocab)`` next-character logits."""

    def __init__(self, vocab_size, seq_len=64, d_model=64, heads=4, layers=2, dropout=0.0, checkpoint=False):
        super().__init__()
        self.seq_len = seq_len
        self.checkpoint = checkpoint
        self.token = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(seq_len, d_model)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model, dropout=dropout,
                                       activation="gelu", batch_first=True, norm_first=True)
            for _ in range(layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, codes):
        t = codes.shape[1]
        positions = torch.arange(t, device=codes.device)
        h = self.token(codes) + self.position(positions)
        mask = causal_mask(t, codes.device)
        for block in self.blocks:
            if self.checkpoint and torch.is_grad_enabled():
                h = checkpoint_block(block, h, src_mask=mask, is_causal=True, use_reentrant=False)
            else:
                h = block(h, src_mask=mask, is_causal=True)
        return self.head(self.norm(h))


def causal_mask(t, device):
    """``(t, t)`` float mask: 0 on and below the diagonal, -inf above (position i sees 0..i)."""
    return torch.full((t, t), float("-inf"), device=device).triu(1)


def train(data, device, steps=200, batch_size=32, seq_len=64, d_model=64, heads=4, layers=2, lr=3e-3,
          dropout=0.0, checkpoint=False, seed=0, profile=False, log_every=50, log=print, amp=False,
          tensorboard=None):
    """Train a fresh model with AdamW; returns ``{"model", "losses", "seconds", "report"}``.

    ``amp``: mixed precision, the forward and the loss under ``autocast`` (float16) and the
    gradients scaled by a ``GradScaler`` (float32 parameters and optimizer state).

    ``losses``: the training loss (nats per character) of every step. ``report``: the memory
    profiler's report when ``profile`` is set, else None. ``seconds``: training time per step.
    The loss of every step goes to the report's training curves and, with ``tensorboard`` (a
    folder), to TensorBoard.
    """
    torch.manual_seed(seed)
    model = CharTransformer(len(data.vocab), seq_len, d_model, heads, layers, dropout, checkpoint).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    losses = []
    device_type = torch.device(device).type
    scaler = torch.amp.GradScaler(device_type, enabled=amp)
    profiler = None
    if profile:
        from gputorch.profiler import MemoryProfiler
        profiler = MemoryProfiler(model=model, optimizer=optimizer)
        profiler.__enter__()
    curves = Curves(tensorboard, profiler)
    start = time.perf_counter()
    try:
        for step in range(1, steps + 1):
            x, y = (torch.tensor(a, device=device) for a in data.batch(rng, batch_size, seq_len))
            with torch.autocast(device_type, dtype=torch.float16, enabled=amp):
                logits = model(x)
                loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
            curves.add("loss", losses[-1], step)
            if step % log_every == 0 or step == steps:
                log(f"  step {step:5d}  loss {np.mean(losses[-log_every:]):.3f} nats/char")
    finally:
        curves.close()
        if profiler is not None:
            profiler.__exit__(None, None, None)
    return {"model": model, "losses": losses, "seconds": (time.perf_counter() - start) / steps,
            "report": profiler.report() if profiler is not None else None}


def generate(model, data, prompt, length=200, temperature=0.8, seed=0):
    """``prompt`` continued by ``length`` sampled characters (characters outside the vocabulary dropped)."""
    device = next(model.parameters()).device
    codes = [data.index[c] for c in prompt if c in data.index] or [0]
    generator = torch.Generator(device=device).manual_seed(seed)
    model.eval()
    with torch.no_grad():
        for _ in range(length):
            window = torch.tensor([codes[-model.seq_len:]], device=device)
            probs = (model(window)[0, -1] / temperature).softmax(-1)
            codes.append(int(torch.multinomial(probs, 1, generator=generator).item()))
    model.train()
    return data.decode(codes)


def compare(off, on):
    """Lines comparing two ``train(..., profile=True)`` results, without and with checkpointing."""
    rows = [("peak tracked bytes", off["report"].peak_bytes, on["report"].peak_bytes),
            ("peak activations", off["report"].category_peaks["activations"],
             on["report"].category_peaks["activations"])]
    lines = [f"{'':24} {'checkpointing off':>18} {'checkpointing on':>18}   on/off"]
    for name, a, b in rows:
        lines.append(f"{name:24} {a / 2**20:15.2f} MiB {b / 2**20:15.2f} MiB   {b / a:.2f}x")
    lines.append(f"{'time per step':24} {off['seconds'] * 1e3:16.1f} ms {on['seconds'] * 1e3:16.1f} ms   "
                 f"{on['seconds'] / off['seconds']:.2f}x")
    diff = max(abs(a - b) for a, b in zip(off["losses"], on["losses"]))
    lines.append(f"{'final loss':24} {off['losses'][-1]:18.4f} {on['losses'][-1]:18.4f}   "
                 f"(largest difference over all steps: {diff:.1e})")
    return lines


def main(argv=None):
    """Command line (see the module docstring); returns the exit status."""
    from gputorch.__main__ import CommandError, resolve_device
    parser = argparse.ArgumentParser(prog="python -m gputorch.examples.char_transformer",
                                     description="A character-level transformer LM, with gradient checkpointing "
                                                 "on/off and the memory profiler.")
    parser.add_argument("--text", help="a UTF-8 text file (default: gputorch's own docstrings)")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--checkpoint", choices=["on", "off", "both"], default="both")
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--dropout", type=float, default=0.0, help="dropout probability in the blocks (default 0)")
    parser.add_argument("--amp", action="store_true",
                        help="mixed precision: float16 autocast and a GradScaler (float32 parameters)")
    parser.add_argument("--out", help="folder for the memory reports (HTML and JSON)")
    parser.add_argument("--tensorboard", metavar="DIR",
                        help=TENSORBOARD_HELP + ", one run per checkpointing mode "
                                                "(DIR/checkpoint_off, DIR/checkpoint_on)")
    args = parser.parse_args(argv)
    for name in ("steps", "seq_len", "layers", "d_model", "batch_size"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    if not 0.0 <= args.dropout < 1.0:
        parser.error(f"--dropout must be in [0, 1), got {args.dropout}")
    if args.d_model % 4:
        parser.error(f"--d-model must be a multiple of the 4 attention heads, got {args.d_model}")
    try:
        device = resolve_device(args.device)
        if args.text is None:
            text = default_text()
        else:
            try:
                with open(args.text, encoding="utf-8") as f:
                    text = f.read()
            except OSError as e:
                raise CommandError(f"--text {args.text}: {e.strerror or e}", 1) from None
            except UnicodeDecodeError:
                raise CommandError(f"--text {args.text}: not a UTF-8 text file", 1) from None
        if len(text) < args.seq_len + 2:
            raise CommandError(f"--text: {len(text)} characters, need more than --seq-len + 1 = "
                               f"{args.seq_len + 1}", 2)
    except CommandError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.code
    data = CharData(text)
    print(f"text: {len(text):,} characters, {len(data.vocab)} distinct; model: {args.layers} blocks, "
          f"d_model {args.d_model}, context {args.seq_len}, batch {args.batch_size}, on {device}")
    runs = {}
    for mode in (["off", "on"] if args.checkpoint == "both" else [args.checkpoint]):
        print(f"checkpointing {mode}:")
        run = os.path.join(args.tensorboard, f"checkpoint_{mode}") if args.tensorboard else None
        runs[mode] = train(data, device, steps=args.steps, batch_size=args.batch_size, seq_len=args.seq_len,
                           d_model=args.d_model, layers=args.layers, dropout=args.dropout,
                           checkpoint=mode == "on", profile=True, amp=args.amp,
                           log_every=max(args.steps // 4, 1),
                           tensorboard=run)
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            runs[mode]["report"].save_html(os.path.join(args.out, f"checkpoint_{mode}.html"))
            runs[mode]["report"].save_json(os.path.join(args.out, f"checkpoint_{mode}.json"))
    last = runs[list(runs)[-1]]
    print("\nsample:", repr(generate(last["model"], data, "The ", length=120)))
    if len(runs) == 2:
        print("\n" + "\n".join(compare(runs["off"], runs["on"])))
    else:
        report = last["report"]
        print(f"\npeak {report.peak_bytes / 2**20:.2f} MiB, activations {report.category_peaks['activations'] / 2**20:.2f} MiB")
    if args.out:
        print(f"memory reports written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
