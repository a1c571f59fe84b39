"""Real tensors beside meta tensors: an error, as in PyTorch, except inside a memory estimate's
replay, whose loss closes over real targets (:class:`real_tensors_as_meta`).

Kept apart from ``meta.py`` so that the dispatcher can read the flag without creating the meta
backend at import time."""


# Whether real tensors that meet meta tensors in an op take part as meta tensors of their shape
# (a memory estimate's replay, whose loss closes over real targets); otherwise mixing is an error,
# as in PyTorch. Set by :func:`real_tensors_as_meta`.
REAL_AS_META = [False]


class real_tensors_as_meta:
    """Context manager: inside, an op given meta and real tensors treats the real ones as meta
    tensors of the same shape and dtype (PyTorch's fake tensors do the same)."""

    def __enter__(self):
        self._prev = REAL_AS_META[0]
        REAL_AS_META[0] = True
        return self

    def __exit__(self, *exc):
        REAL_AS_META[0] = self._prev
        return False
