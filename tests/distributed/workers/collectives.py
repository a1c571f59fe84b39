"""Every collective on 2+ ranks against NumPy, on this rank's device (CPU, or a simulated GPU).
``argv[1]``: the backend ("mpi" by default; "nccl" sends CUDA tensors through NCCL; "nccl-absent" is
"nccl" where CuPy has no NCCL: CUDA tensors then go through host memory over MPI, said once)."""
import sys

import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
from _common import passed, setup  # noqa: E402

import gputorch as torch  # noqa: E402
import gputorch.distributed as dist  # noqa: E402

import warnings  # noqa: E402

backend = sys.argv[1] if len(sys.argv) > 1 else "mpi"
if backend == "nccl-absent":
    from gputorch.distributed import _nccl
    _nccl.nccl_module = lambda: None
rank, n, dev = setup(backend.replace("-absent", ""))
if backend == "nccl-absent" and dev.type == "cuda":
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        probe = torch.ones(2, device=dev)
        dist.all_reduce(probe)
        dist.all_reduce(probe)
    said = [w for w in caught if "through host memory over MPI" in str(w.message)]
    assert len(said) == 1, [str(w.message) for w in caught]
    assert probe.tolist() == [float(n * n)] * 2 and dist.group.WORLD._nccl is None


def data(r, shape=(3, 4), dtype=np.float64):
    return (np.arange(np.prod(shape)).reshape(shape) * (r + 1) + r).astype(dtype)


def T(a):
    return torch.tensor(a, device=dev)


def check(t, expected):
    got = t.cpu().numpy()
    assert got.dtype == np.asarray(expected).dtype, (got.dtype, np.asarray(expected).dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


every = [data(r) for r in range(n)]
for op, ref in ((dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.PRODUCT, np.prod), (dist.ReduceOp.MIN, np.min),
                (dist.ReduceOp.MAX, np.max), (dist.ReduceOp.AVG, np.mean)):
    t = T(data(rank))
    dist.all_reduce(t, op=op)
    check(t, ref(np.stack(every), axis=0))
for dtype in (np.float32, np.float16, np.int64, np.int32, np.complex128):
    t = T(data(rank, dtype=dtype))
    dist.all_reduce(t)
    check(t, sum(data(r, dtype=dtype) for r in range(n)).astype(dtype))
flags = T(np.array([rank == 0, False, True]))
dist.all_reduce(flags)                                          # bool SUM is logical or
check(flags, np.array([True, False, True]))
bits = T(np.array([rank + 1, 3], dtype=np.int64))
dist.all_reduce(bits, op=dist.ReduceOp.BOR)
check(bits, np.array([np.bitwise_or.reduce(np.arange(1, n + 1)), 3]))
strided = T(data(rank, (4, 3))).t()                               # a non-contiguous view
dist.all_reduce(strided)
check(strided, sum(data(r, (4, 3)) for r in range(n)).T)
scalar = T(np.array(float(rank)))
dist.all_reduce(scalar)
check(scalar, np.array(float(sum(range(n)))))

t = T(data(rank))
dist.broadcast(t, src=n - 1)
check(t, every[n - 1])
t = T(data(rank))
dist.reduce(t, dst=0, op=dist.ReduceOp.SUM)
check(t, sum(every) if rank == 0 else every[rank])

out = [T(np.zeros((3, 4))) for _ in range(n)]
dist.all_gather(out, T(data(rank)))
for r in range(n):
    check(out[r], every[r])
big = T(np.zeros((n * 3, 4)))
dist.all_gather_into_tensor(big, T(data(rank)))
check(big, np.concatenate(every))
stacked = T(np.zeros((n, 3, 4)))
dist.all_gather_into_tensor(stacked, T(data(rank)))
check(stacked, np.stack(every))

full = [data(r, (n * 2, 3)) for r in range(n)]
piece = T(np.zeros((2, 3)))
dist.reduce_scatter_tensor(piece, T(full[rank]))
check(piece, sum(full)[rank * 2:(rank + 1) * 2])
piece = T(np.zeros((2, 3)))
dist.reduce_scatter(piece, [T(full[rank][2 * r:2 * r + 2]) for r in range(n)], op=dist.ReduceOp.AVG)
check(piece, sum(full)[rank * 2:(rank + 1) * 2] / n)

dst_list = [T(np.zeros((3, 4))) for _ in range(n)] if rank == 0 else None
dist.gather(T(data(rank)), dst_list, dst=0)
if rank == 0:
    for r in range(n):
        check(dst_list[r], every[r])
got = T(np.zeros((3, 4)))
dist.scatter(got, [T(data(r) * 7) for r in range(n)] if rank == 1 else None, src=1)
check(got, data(rank) * 7)

rows = np.arange(2 * n * 3, dtype=np.float64).reshape(2 * n, 3) + 100 * rank
out = T(np.zeros((2 * n, 3)))
dist.all_to_all_single(out, T(rows))
expected = np.concatenate([(np.arange(2 * n * 3.).reshape(2 * n, 3) + 100 * r)[2 * rank:2 * rank + 2] for r in range(n)])
check(out, expected)
if n == 2:                                                        # uneven splits
    split_in = [1, 3] if rank == 0 else [2, 2]
    split_out = [1, 2] if rank == 0 else [3, 2]
    src = np.arange(4, dtype=np.float64) + 10 * rank
    out = T(np.zeros(sum(split_out)))
    dist.all_to_all_single(out, T(src), split_out, split_in)
    check(out, np.array([0., 10., 11.]) if rank == 0 else np.array([1., 2., 3., 12., 13.]))

if rank == 0:
    dist.send(T(np.array([5., 6.])), dst=1, tag=3)
    w = dist.isend(T(np.array([7.])), dst=1)
    w.wait()
elif rank == 1:
    y = T(np.zeros(2))
    assert dist.recv(y, src=0, tag=3) == 0
    check(y, np.array([5., 6.]))
    z = T(np.zeros(1))
    assert dist.recv(z) == 0                                      # any source: the sender's rank
    check(z, np.array([7.]))

works = [dist.all_reduce(T(np.full(4, float(rank))), async_op=True) for _ in range(3)]
for w in works:
    assert w.wait() is True and w.is_completed()
    check(w.result()[0], np.full(4, float(sum(range(n)))))

objs = [None] * n
dist.all_gather_object(objs, {"rank": rank, "name": f"r{rank}"})
assert objs == [{"rank": r, "name": f"r{r}"} for r in range(n)], objs
lst = [{"a": 1}, "two", 3] if rank == 0 else [None, None, None]
dist.broadcast_object_list(lst, src=0)
assert lst == [{"a": 1}, "two", 3], lst
gathered = [None] * n if rank == 0 else None
dist.gather_object(("x", rank), gathered, dst=0)
if rank == 0:
    assert gathered == [("x", r) for r in range(n)]
holder = [None]
dist.scatter_object_list(holder, [f"for {r}" * (r + 1) for r in range(n)] if rank == 0 else None, src=0)
assert holder[0] == f"for {rank}" * (rank + 1), holder

if n >= 2:
    sub = dist.new_group([0, 1])
    t = T(np.array([float(rank + 1)]))
    dist.all_reduce(t, group=sub)
    if rank in (0, 1):
        check(t, np.array([3.]))
        assert dist.get_world_size(sub) == 2 and dist.get_rank(sub) == rank
    else:
        assert sub is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(sub) == -1
        check(t, np.array([float(rank + 1)]))

try:
    dist.broadcast(T(np.zeros(1)), src=n)
except ValueError as e:
    assert f"src rank {n} is not part of" in str(e), e
else:
    raise AssertionError("broadcast from a rank outside the group did not raise")
dist.barrier()
dist.destroy_process_group()
assert not dist.is_initialized()
passed(rank)
