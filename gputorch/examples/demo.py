"""``gputorch demo``: train the MNIST-1D CNN, optionally swap devices mid-training, explain its memory.

What it does, in order:

1. generates MNIST-1D locally with the ``mnist1d`` package (4000 training and 1000 test
   sequences of length 40, ten classes; see :mod:`gputorch.examples.mnist1d`);
2. trains the data set authors' CNN with their settings (Adam, learning rate 1e-2, batches of
   100 consecutive rows, 6000 steps = 150 epochs) on the chosen device, under the memory profiler, with a progress
   bar per epoch (tqdm, when the output is a terminal) and a line of loss and test accuracy
   every few epochs; the authors report ~94% test accuracy for this model;
3. with ``swap_to``, moves the model and its optimizer to another device half-way and carries
   on training there (``model.to(device)`` keeps every Parameter object, so the optimizer still
   holds them; its Adam state follows the parameters at the next step);
4. prints the profiler's report and writes it as ``memory_report.html`` and
   ``memory_report.json`` into ``out_dir``; the HTML page draws the training curves (loss per
   epoch, test accuracy) under the memory timeline, and with ``tensorboard`` (a folder) they are
   also logged for TensorBoard.
"""
import os
import time

import gputorch as torch
from gputorch.examples.curves import Curves
from gputorch.examples.mnist1d import BATCH_SIZE, CNN, LEARNING_RATE, PUBLISHED_ACCURACY, accuracy, \
    batch_slices, load_mnist1d
from gputorch.profiler import MemoryProfiler

EPOCHS = 150  # 6000 steps of 100 on 4000 training sequences, as the authors train
PROFILE_SAMPLES = 10_000  # timeline samples at full detail; then one per phase change (keeps the JSON small)


def _progress(iterable, desc, enabled):
    """``iterable`` wrapped in a transient tqdm bar when tqdm is installed and ``enabled`` allows it
    (None: only when stderr is a terminal)."""
    if enabled is False:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, desc=desc, leave=False, disable=None if enabled is None else False, unit="batch")


def _optimizer_state_devices(optimizer):
    """The sorted devices of the optimizer's state tensors (0-d step counters left out)."""
    return sorted({str(v.device) for state in optimizer.state.values() for v in state.values()
                   if isinstance(v, torch.Tensor) and v.dim() > 0})


def run(device, epochs=EPOCHS, swap_to=None, out_dir="gputorch-demo", seed=0, log_every=None, progress=None,
        say=print, tensorboard=None):
    """Train, profile and report; returns a dict of what happened.

    ``device``/``swap_to`` are ``gputorch.device`` objects (``swap_to`` None: no swap, else the
    device the model and optimizer move to after half the epochs). ``log_every``: epochs between
    the loss/accuracy lines (default: a tenth of the run). ``progress``: True/False/None (tqdm
    bars always, never, or only on a terminal). The result has ``accuracy``, ``losses`` (mean
    training loss per epoch), ``moves`` (epoch, from, to), ``report`` (the MemoryReport),
    ``files`` (written paths) and ``seconds``. ``tensorboard``: a folder to log the curves into.
    """
    log_every = log_every or max(epochs // 10, 1)
    start = time.perf_counter()
    x_np, y_np, xt_np, yt_np = load_mnist1d()
    say(f"MNIST-1D: {len(x_np)} training and {len(xt_np)} test sequences of length {x_np.shape[1]}, "
        f"generated locally by the mnist1d package ({time.perf_counter() - start:.1f} s)")

    torch.manual_seed(seed)
    model = CNN().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    n_params = sum(p.numel() for p in model.parameters())
    say(f"model: the authors' CNN ({n_params:,} parameters), Adam lr {LEARNING_RATE}, batch {BATCH_SIZE}, "
        f"{epochs} epochs on {device}" + (f", moving to {swap_to} after epoch {epochs // 2}" if swap_to else ""))
    data = [torch.tensor(a, device=device) for a in (x_np, y_np, xt_np, yt_np)]

    losses, moves = [], []
    train_start = time.perf_counter()
    with MemoryProfiler(model=model, optimizer=optimizer, max_samples=PROFILE_SAMPLES) as profiler:
        curves = Curves(tensorboard, profiler)
        for epoch in range(1, epochs + 1):
            if swap_to is not None and epoch == epochs // 2 + 1:
                before = device
                model.to(swap_to)  # same Parameter objects, data now on swap_to
                data = [t.to(swap_to) for t in data]
                device = swap_to
                moves.append((epoch - 1, str(before), str(swap_to)))
                say(f"-- after epoch {epoch - 1}: model.to('{swap_to}'): parameters now on "
                    f"{next(model.parameters()).device}, the optimizer holds the same Parameter objects")
            x, y, x_test, y_test = data
            total, count = 0.0, 0
            for rows in _progress(batch_slices(x.shape[0], BATCH_SIZE), f"epoch {epoch}/{epochs}", progress):
                # A copy of the batch: the graph saves conv1's input, and a view would make it hold
                # (and the profiler charge to activations) the storage of the whole training set.
                loss = torch.nn.functional.cross_entropy(model(x[rows].clone()), y[rows])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss.item()
                count += 1
            losses.append(total / count)
            curves.add("loss", losses[-1], profiler.step)
            if moves and epoch == moves[-1][0] + 1:
                say(f"-- the first step on {device} moved Adam's state too: "
                    f"{', '.join(_optimizer_state_devices(optimizer))}; training continues")
            if epoch % log_every == 0 or epoch == epochs:
                test_accuracy = accuracy(model, x_test, y_test)
                curves.add("test accuracy", test_accuracy, profiler.step)
                say(f"epoch {epoch:4d}/{epochs}  loss {losses[-1]:.4f}  test accuracy "
                    f"{test_accuracy:6.1%}  ({time.perf_counter() - train_start:.1f} s)")
    curves.close()
    acc = accuracy(model, data[2], data[3])
    say(f"\ntest accuracy {acc:.1%} on {device} (the MNIST-1D authors report ~{PUBLISHED_ACCURACY['cnn']:.0%} "
        f"for this CNN); trained in {time.perf_counter() - train_start:.1f} s\n")

    report = profiler.report()
    say(str(report))
    os.makedirs(out_dir, exist_ok=True)
    files = [report.save_html(os.path.join(out_dir, "memory_report.html")),
             report.save_json(os.path.join(out_dir, "memory_report.json"))]
    say(f"\nmemory report written to {os.path.abspath(files[0])} (open it in a browser) and {files[1]}")
    if tensorboard:
        say(f"training curves logged for TensorBoard: tensorboard --logdir {tensorboard}")
    return {"accuracy": acc, "losses": losses, "moves": moves, "report": report, "files": files,
            "seconds": time.perf_counter() - start}
