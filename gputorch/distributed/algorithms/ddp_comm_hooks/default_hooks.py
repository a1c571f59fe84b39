"""The standard DDP communication hooks. A hook is ``hook(state, bucket) -> Future`` whose value is
the bucket's averaged flat gradient tensor; ``state`` is the process group (None: the default one).

* :func:`allreduce_hook`: average over the group (DDP's own behaviour): an all-reduce with
  ``ReduceOp.AVG``, which divides once the sum has arrived (PyTorch divides first; dividing after
  saves a pass over the bucket before it can be sent, and float16 buckets are compressed by the
  hooks below, which divide first so that their sums cannot overflow);
* :func:`fp16_compress_hook` / :func:`bf16_compress_hook`: the same on a float16 (bfloat16) copy,
  halving the bytes sent, then written back into the bucket in its own dtype.
"""
from ...collectives import all_reduce
from ...process_group import resolve
from ...reduce_op import ReduceOp

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook"]


def _group(state):
    return resolve(state)


def allreduce_hook(process_group, bucket):
    """Average ``bucket.buffer()`` over the group, in place."""
    pg = _group(process_group)
    work = all_reduce(bucket.buffer(), op=ReduceOp.AVG, group=pg, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def _compressed(process_group, bucket, dtype):
    pg = _group(process_group)
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(pg.size)
    fut = all_reduce(compressed, group=pg, async_op=True).get_future()

    def decompress(f):
        buffer.copy_(f.value()[0])
        return buffer
    return fut.then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Average the bucket over the group in float16 (half the bytes), then restore its dtype."""
    from .... import _dtype
    return _compressed(process_group, bucket, _dtype.float16)


def bf16_compress_hook(process_group, bucket):
    """As :func:`fp16_compress_hook` in bfloat16 (needs a bfloat16 dtype, which gputorch lacks)."""
    raise RuntimeError("bf16_compress_hook needs the bfloat16 dtype, which gputorch does not have yet; "
                       "use fp16_compress_hook")
