"""Command line: ``python -m gputorch [command] [--device DEVICE]`` (also installed as ``gputorch``).

Commands:
  quickstart   train a small MLP and move it between devices (the default)

Each command takes ``--device auto|cpu|cuda|cuda:N``; ``auto`` picks CUDA when a
GPU is usable and the CPU otherwise. A device that is not valid, or not present,
is reported in one line on stderr (exit status 2 for a malformed device, 1 for a
missing GPU); there is no traceback for either.
"""
import argparse
import sys

PROG = "gputorch"


class DeviceError(Exception):
    """A --device value that cannot be used; ``code`` is the exit status."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def resolve_device(spec):
    """The ``gputorch.device`` for a --device value, or DeviceError saying why it cannot be used."""
    import gputorch

    spec = spec.strip()
    if spec == "auto":
        return gputorch.device("cuda" if gputorch.cuda.is_available() else "cpu")
    try:
        dev = gputorch.device(spec)
    except (RuntimeError, ValueError, TypeError):
        raise DeviceError(f"invalid device '{spec}': expected auto, cpu, cuda or cuda:N (N = 0, 1, ...)", 2) \
            from None
    if dev.type == "cuda":
        if not gputorch.cuda.is_available():
            from gputorch.backends import get_backend
            reason = get_backend("cuda").reason_unavailable or "no CUDA device is visible"
            raise DeviceError(f"--device {spec}: CUDA is not available ({reason}); run with --device cpu", 1)
        count = gputorch.cuda.device_count()
        if dev.index is not None and dev.index >= count:
            raise DeviceError(
                f"--device {spec}: no such GPU, {count} CUDA device{'s are' if count != 1 else ' is'} visible "
                f"(cuda:0 to cuda:{count - 1}); run with --device cuda:0 or --device cpu", 1)
    return dev


def _run_quickstart(args, device):
    from .examples import quickstart
    quickstart.main(device=device)
    return 0


# One entry per command: name -> (help text, handler(args, device) -> exit status).
# A new command (e.g. "demo") adds an entry here and, if it needs options, a few
# lines in _build_parser.
COMMANDS = {
    "quickstart": ("train a small MLP on a toy data set and move it between devices", _run_quickstart),
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
    for name, (help_text, _) in COMMANDS.items():
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        # SUPPRESS: a --device given before the command is kept unless repeated after it.
        _add_device_option(cmd, argparse.SUPPRESS)
    return parser


def main(argv=None):
    """Entry point for ``python -m gputorch`` and the ``gputorch`` script; returns the exit status."""
    args = _build_parser().parse_args(argv)
    command = args.command or DEFAULT_COMMAND
    try:
        device = resolve_device(args.device)
    except DeviceError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return e.code
    handler = COMMANDS[command][1]
    return handler(args, device)


if __name__ == "__main__":
    sys.exit(main())
