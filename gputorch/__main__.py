"""Command line: ``python -m gputorch [command] [--device DEVICE]`` (also installed as ``gputorch``).

Commands:
  quickstart   train a small MLP and move it between devices (the default)
  demo         train the MNIST-1D CNN under the memory profiler, optionally swapping devices

Each command takes ``--device auto|cpu|cuda|cuda:N``; ``auto`` picks CUDA when a
GPU is usable and the CPU otherwise. A device that is not valid, or not present,
is reported in one line on stderr (exit status 2 for a malformed device, 1 for a
missing GPU); there is no traceback for either, nor for the other options' bad values.
"""
import argparse
import os
import sys

PROG = "gputorch"


class CommandError(Exception):
    """An option that cannot be used (a bad or absent device, an impossible value, a missing
    package); reported as one line on stderr, ``code`` is the exit status."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def resolve_device(spec):
    """The ``gputorch.device`` for a --device value, or CommandError saying why it cannot be used."""
    import gputorch

    spec = spec.strip()
    if spec == "auto":
        return gputorch.device("cuda" if gputorch.cuda.is_available() else "cpu")
    try:
        dev = gputorch.device(spec)
    except (RuntimeError, ValueError, TypeError):
        raise CommandError(f"invalid device '{spec}': expected auto, cpu, cuda or cuda:N (N = 0, 1, ...)", 2) \
            from None
    if dev.type == "cuda":
        if not gputorch.cuda.is_available():
            from gputorch.backends import get_backend
            reason = get_backend("cuda").reason_unavailable or "no CUDA device is visible"
            raise CommandError(f"--device {spec}: CUDA is not available ({reason}); run with --device cpu", 1)
        count = gputorch.cuda.device_count()
        if dev.index is not None and dev.index >= count:
            raise CommandError(
                f"--device {spec}: no such GPU, {count} CUDA device{'s are' if count != 1 else ' is'} visible "
                f"(cuda:0 to cuda:{count - 1}); run with --device cuda:0 or --device cpu", 1)
    return dev


def _run_quickstart(args, device):
    from .examples import quickstart
    quickstart.main(device=device)
    return 0


def _demo_options(parser):
    parser.add_argument("--epochs", type=int, default=None, metavar="N",
                        help="passes over the 4000 training sequences (default 150 = the authors' 6000 steps)")
    parser.add_argument("--swap-device", nargs="?", const="other", default=None, metavar="DEVICE",
                        help="move the model and optimizer to DEVICE half-way (default: the other of cpu/cuda)")
    parser.add_argument("--out", default="gputorch-demo", metavar="DIR",
                        help="folder for memory_report.html and .json (default ./gputorch-demo)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true", help="no tqdm progress bars")
    parser.add_argument("--tensorboard", metavar="DIR", default=None,
                        help="also log the loss and test accuracy for TensorBoard into DIR")


def _swap_target(spec, device):
    """The device ``--swap-device spec`` moves to from ``device``, or CommandError (exit 2) saying why not."""
    import gputorch
    if spec == "other":
        if device.type == "cuda":
            return gputorch.device("cpu")
        if not gputorch.cuda.is_available():
            raise CommandError("--swap-device: no second device to move to, CUDA is not available here "
                              "(GPUTORCH_SIMULATE_CUDA=1 simulates a GPU, about 10x slower than the CPU; "
                              "try it with --epochs 4)", 2)
        return gputorch.device("cuda")
    target = resolve_device(spec)
    if target == device or (target.type == device.type == "cuda" and (target.index or 0) == (device.index or 0)):
        raise CommandError(f"--swap-device {spec}: the model already trains on {device}; "
                          "name another device", 2)
    return target


def _run_demo(args, device):
    from .examples.mnist1d import DatasetUnavailable
    if args.epochs is not None and args.epochs < 2:
        raise CommandError(f"--epochs must be at least 2, got {args.epochs}", 2)
    swap_to = None if args.swap_device is None else _swap_target(args.swap_device, device)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise CommandError(f"--out {args.out}: exists and is not a folder", 2)
    try:  # before training, not after it
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        raise CommandError(f"--out {args.out}: cannot create the folder ({e.strerror or e})", 2) from None
    if args.tensorboard:
        try:
            import gputorch.utils.tensorboard  # noqa: F401
        except ImportError as e:
            raise CommandError(f"--tensorboard: {e}", 1) from None
    from .examples import demo
    try:
        demo.run(device, epochs=args.epochs or demo.EPOCHS, swap_to=swap_to, out_dir=args.out, seed=args.seed,
                 progress=False if args.no_progress else None, tensorboard=args.tensorboard)
    except DatasetUnavailable as e:
        raise CommandError(str(e), 1) from None
    return 0


# One entry per command: name -> (help text, handler(args, device) -> exit status, add_options(parser) or None).
COMMANDS = {
    "quickstart": ("train a small MLP on a toy data set and move it between devices", _run_quickstart, None),
    "demo": ("train the MNIST-1D CNN (optionally swapping devices) and report its memory", _run_demo,
             _demo_options),
}
DEFAULT_COMMAND = "quickstart"


def _add_device_option(parser, default):
    parser.add_argument("--device", default=default, metavar="DEVICE",
                        help="auto (default: CUDA if available, else CPU), cpu, cuda or cuda:N")


def _build_parser():
    parser = argparse.ArgumentParser(
        prog=PROG, description="gputorch: a PyTorch-compatible deep learning framework on NumPy and CuPy.")
    from . import __version__
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    _add_device_option(parser, "auto")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND",
                                help=f"what to run (default: {DEFAULT_COMMAND})")
    for name, (help_text, _, add_options) in COMMANDS.items():
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        if add_options is not None:
            add_options(cmd)
        # SUPPRESS: a --device given before the command is kept unless repeated after it.
        _add_device_option(cmd, argparse.SUPPRESS)
    return parser


def main(argv=None):
    """Entry point for ``python -m gputorch`` and the ``gputorch`` script; returns the exit status."""
    args = _build_parser().parse_args(argv)
    command = args.command or DEFAULT_COMMAND
    try:
        return COMMANDS[command][1](args, resolve_device(args.device))
    except CommandError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return e.code


if __name__ == "__main__":
    sys.exit(main())
