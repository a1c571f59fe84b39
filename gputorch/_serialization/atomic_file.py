"""Crash-safe writing of a file: the path holds the old content or the new one, never a torn one.

:func:`atomic_write` writes into a temporary file in the same directory, named
``.<name>.<pid>.<8 hex digits>.gputorch-tmp`` (hidden, beside the target), flushes and fsyncs it,
then ``os.replace``-s it onto the path and fsyncs the directory. On an error the temporary file is
removed and the error names the path. A process killed mid-write (SIGKILL, power loss) leaves its
temporary file behind; the next save to the same path removes such files whose process is gone.
"""
import contextlib
import errno
import os
import re
import secrets
import stat

TEMP_SUFFIX = ".gputorch-tmp"


def temp_name(name, pid=None):
    """The temporary file name used while saving to ``name`` (a file name, no directory)."""
    return f".{name}.{os.getpid() if pid is None else pid}.{secrets.token_hex(4)}{TEMP_SUFFIX}"


def _stale_pattern(name):
    return re.compile(r"\." + re.escape(name) + r"\.(\d+)\.[0-9a-f]{8}" + re.escape(TEMP_SUFFIX) + r"\Z")


def _alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True     # exists but is not ours, or we cannot tell: keep its file
    return True


def remove_stale_temps(directory, name):
    """Remove temporary files left by saves to ``name`` whose process no longer exists."""
    pattern = _stale_pattern(name)
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        match = pattern.match(entry)
        if match and not _alive(int(match.group(1))):
            with contextlib.suppress(OSError):
                os.remove(os.path.join(directory, entry))


def _keep_mode(fd, target):
    """Give the new file the permissions of the file it replaces (as rewriting it in place would)."""
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return
    with contextlib.suppress(OSError, AttributeError):
        os.fchmod(fd, mode)


def _fsync_directory(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:          # platforms where directories cannot be opened (Windows)
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _naming_path(exc, path):
    """``exc`` with the target path in it: an OSError of the same type naming the path, or (other
    errors) the same error with a note."""
    if isinstance(exc, OSError):
        detail = exc.strerror or str(exc)
        try:
            return type(exc)(exc.errno or errno.EIO, f"{detail} (while saving a checkpoint to {path!r})", path)
        except TypeError:
            return OSError(exc.errno or errno.EIO, f"{detail} (while saving a checkpoint to {path!r})", path)
    if hasattr(exc, "add_note"):
        exc.add_note(f"while saving a checkpoint to {path!r}")
    return exc


@contextlib.contextmanager
def atomic_write(path):
    """Context manager yielding a binary stream; on success its content replaces ``path`` atomically."""
    path = os.fspath(path)
    target = os.path.realpath(path) if os.path.islink(path) else os.path.abspath(path)
    directory, name = os.path.split(target)
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {os.path.dirname(path) or directory} does not exist.")
    remove_stale_temps(directory, name)
    while True:
        tmp = os.path.join(directory, temp_name(name))
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
            _keep_mode(fd, target)
            break
        except FileExistsError:
            continue
        except OSError as exc:
            raise _naming_path(exc, path) from exc
    try:
        with os.fdopen(fd, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if isinstance(exc, Exception):
            error = _naming_path(exc, path)
            if error is exc:
                raise
            raise error from exc
        raise
    _fsync_directory(directory)
