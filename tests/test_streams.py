"""``gputorch.Stream`` and ``gputorch.Event`` (``gputorch/_streams.py``): CPU streams are ordering
objects and CPU events cannot be recorded, as in PyTorch (compared where torch is installed); CUDA
streams queue work and CUDA events record, order and time it."""
import pytest

import gputorch


def test_cpu_stream_is_an_ordering_object():
    s = gputorch.Stream("cpu")
    assert (s.device, s.device_type, s.device_index, s.stream_id) == (gputorch.device("cpu"), 0, -1, 0)
    assert s.query() is True and s.is_capturing() is False
    s.synchronize()
    s.wait_stream(gputorch.Stream("cpu"))
    s.wait_event(gputorch.Event("cpu"))
    with s:
        assert (gputorch.ones(2) + 1).tolist() == [2.0, 2.0]
    assert s == gputorch.Stream("cpu") and hash(s) == hash(gputorch.Stream("cpu"))
    with pytest.raises(RuntimeError, match="native handle"):
        s.native_handle


def test_cpu_events_cannot_be_recorded():
    e = gputorch.Event("cpu", enable_timing=True)
    assert e.query() is True and e.event_id == 0
    e.synchronize()
    e.wait()
    for call in (e.record, gputorch.Stream("cpu").record_event, lambda: e.elapsed_time(e)):
        with pytest.raises(RuntimeError, match="cpu backend doesn't support events"):
            call()
    with pytest.raises(ValueError, match="enable_timing"):
        gputorch.Event("cpu").elapsed_time(e)
    with pytest.raises(NotImplementedError, match="interprocess"):
        e.ipc_handle()


def test_cpu_streams_and_events_match_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = gputorch.Stream("cpu"), torch.Stream("cpu")
    for name in ("device_type", "device_index", "stream_id"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.query() == theirs.query()
    for lib in (gputorch, torch):
        with pytest.raises(RuntimeError, match="cpu backend doesn't support events"):
            lib.Event("cpu").record()


def test_a_device_index_needs_an_accelerator():
    if gputorch.cuda.is_available():
        assert gputorch.Stream(0).device == gputorch.device("cuda", 0)
    else:
        with pytest.raises(RuntimeError, match="accelerator"):
            gputorch.Stream(0)


def test_cuda_streams_queue_work_and_events_time_it():
    if not gputorch.cuda.is_available():
        pytest.skip("CUDA is not available")
    s = gputorch.Stream()                                   # the current accelerator: CUDA
    assert s.device == gputorch.device("cuda", 0) and s.device_type == 1 and s.stream_id != 0
    start, end = gputorch.Event(enable_timing=True), gputorch.Event("cuda", enable_timing=True)
    with s:
        start.record(s)
        x = gputorch.arange(4.0, device="cuda") * 3
        s.record_event(end)
    other = gputorch.Stream("cuda")
    other.wait_stream(s)
    end.wait(other)
    end.synchronize()
    assert x.tolist() == [0.0, 3.0, 6.0, 9.0]
    assert start.query() and end.query() and s.query()
    assert start.elapsed_time(end) >= 0.0 and end.event_id != 0
    assert s == s and s != other and s.native_handle == s.stream_id
    with pytest.raises(RuntimeError, match="does not match"):
        gputorch.Event("cuda").record(gputorch.Stream("cpu"))
    with pytest.raises(ValueError, match="recorded"):
        gputorch.Event(enable_timing=True).elapsed_time(end)
