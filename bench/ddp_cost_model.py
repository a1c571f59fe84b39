"""A cost model of a DistributedDataParallel step, fitted to measured figures (a model, not a measurement).

Per step on N processes:

    t_step(N) = t_compute + t_exposed(N)
    t_comm(N) = sum over buckets of  alpha + 2 (N - 1) / N * bytes_b / bus_bandwidth   (ring all-reduce)
    t_exposed(N) = max(t_comm(N) - overlap * t_backward, t_last_bucket(N))

``t_compute`` is the 1-process step time with the per-process batch (the global batch / N: the
compute per process shrinks as N grows); ``overlap`` is the fraction of the backward pass that
communication can hide behind (measured on 2 processes); alpha and the bandwidth come from fitting
the measured all-reduce times. The last bucket can never overlap: it is ready only at the end.
"""

__all__ = ["fit_allreduce", "ring_time", "predict_step"]


def ring_time(nbytes, world, alpha, bandwidth):
    """Seconds of one ring all-reduce of ``nbytes`` over ``world`` ranks."""
    if world <= 1:
        return 0.0
    return alpha + 2 * (world - 1) / world * nbytes / bandwidth


def fit_allreduce(rows, world):
    """Least-squares ``(alpha seconds, bandwidth bytes/s)`` from ``[{"bytes", "gputorch_s"}]``."""
    xs = [2 * (world - 1) / world * r["bytes"] for r in rows]
    ys = [r["gputorch_s"] for r in rows]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    alpha = max(my - slope * mx, 0.0)
    return alpha, 1.0 / slope


def predict_step(compute_s, backward_s, bucket_bytes, world, alpha, bandwidth, overlap):
    """Predicted seconds per step (see the module doc)."""
    if world <= 1:
        return compute_s
    comm = sum(ring_time(b, world, alpha, bandwidth) for b in bucket_bytes)
    last = ring_time(bucket_bytes[-1], world, alpha, bandwidth)
    return compute_s + max(comm - overlap * backward_s, last)
