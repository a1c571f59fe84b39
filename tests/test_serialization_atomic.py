"""Crash-safe ``gputorch.save`` to a path: the file holds the old checkpoint or the new one, never a
torn one; failures remove the temporary file, leave the old file untouched and name the path."""
import io
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import gputorch
from gputorch._serialization.atomic_file import TEMP_SUFFIX

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _temps(directory):
    return [name for name in os.listdir(directory) if name.endswith(TEMP_SUFFIX)]


def _run(code, **kwargs):
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_cpu_only_env(), **kwargs)


def _cpu_only_env():
    return {k: v for k, v in os.environ.items() if k != "GPUTORCH_SIMULATE_CUDA"}


def test_save_replaces_and_keeps_permissions(tmp_path):
    path = tmp_path / "ckpt.pt"
    gputorch.save({"v": gputorch.zeros(3)}, path)
    os.chmod(path, 0o640)
    gputorch.save({"v": gputorch.ones(3)}, str(path))
    assert gputorch.load(path)["v"].tolist() == [1, 1, 1]
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert _temps(tmp_path) == []


def test_failed_save_leaves_the_old_file_and_names_the_path(tmp_path):
    path = tmp_path / "ckpt.pt"
    gputorch.save({"v": gputorch.arange(4)}, path)
    before = path.read_bytes()

    class Unpicklable:
        def __reduce__(self):
            raise RuntimeError("cannot pickle this")

    with pytest.raises(RuntimeError, match="cannot pickle this") as info:
        gputorch.save({"v": gputorch.ones(100), "bad": Unpicklable()}, path)
    assert str(path) in "".join(getattr(info.value, "__notes__", []))
    assert path.read_bytes() == before and _temps(tmp_path) == []


def test_missing_parent_directory_is_torchs_error(tmp_path):
    with pytest.raises(RuntimeError, match="Parent directory .*missing does not exist"):
        gputorch.save(1, tmp_path / "missing" / "x.pt")


def test_file_objects_are_written_directly(tmp_path):
    buf = io.BytesIO()
    gputorch.save(gputorch.arange(3), buf)
    buf.seek(0)
    assert gputorch.load(buf).tolist() == [0, 1, 2]
    with open(tmp_path / "f.pt", "wb") as f:
        gputorch.save(gputorch.arange(2), f)
    assert gputorch.load(tmp_path / "f.pt").tolist() == [0, 1] and _temps(tmp_path) == []


def _temp_of(directory, pid, min_size):
    """Whether process ``pid`` has a temporary file of at least ``min_size`` bytes in ``directory``."""
    for name in _temps(directory):
        if f".{pid}." in name:
            try:
                if os.path.getsize(os.path.join(directory, name)) >= min_size:
                    return True
            except FileNotFoundError:
                pass
    return False


def test_sigkill_mid_write_leaves_old_or_new_checkpoint(tmp_path):
    path = tmp_path / "big.pt"
    # ~32 MB per checkpoint; version k has every element equal to k; the saver reports each save
    saver = f"""
        import sys
        import gputorch
        k = 1
        while True:
            gputorch.save({{"w": gputorch.full((4, 1 << 21), float(k)), "k": k}}, {str(path)!r})
            print(k, flush=True)
            k += 1
    """
    gputorch.save({"w": gputorch.zeros(4, 1 << 21), "k": 0}, path)
    proc = _run(saver)
    try:
        assert proc.stdout.readline().strip() == b"1", proc.stderr.read().decode()   # one save done
        deadline = time.monotonic() + 60
        while not _temp_of(tmp_path, proc.pid, 4 << 20):     # the next one is writing its data
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "no write in progress seen"
            time.sleep(0.0005)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    back = gputorch.load(path)
    k = back["k"]
    assert k >= 1 and back["w"].shape == (4, 1 << 21)
    assert bool((back["w"] == float(k)).all())              # one whole checkpoint, old or new
    # the killed process may leave its temporary file; the next save clears it
    gputorch.save({"w": gputorch.ones(1), "k": -1}, path)
    assert _temps(tmp_path) == [] and gputorch.load(path)["k"] == -1


def test_write_failing_for_lack_of_space(tmp_path):
    path = tmp_path / "ckpt.pt"
    gputorch.save({"w": gputorch.zeros(10)}, path)
    before = path.read_bytes()
    limited = f"""
        import resource, signal, sys
        import gputorch
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            gputorch.save({{"w": gputorch.ones(1 << 20)}}, {str(path)!r})   # 4 MB > the 1 MB limit
        except OSError as exc:
            print(type(exc).__name__, exc.errno, exc)
            sys.exit(0)
        sys.exit("no error")
    """
    proc = _run(limited)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    text = out.decode()
    assert "27" in text.split()[1] and "File too large" in text and str(path) in text    # EFBIG
    assert path.read_bytes() == before and _temps(tmp_path) == []
