"""Multi-tensor optimizer updates (``kernels/optimizers.cu``), drop-in replacements of the
array-level updates :func:`gputorch.optim.sgd.sgd_update` and
:func:`gputorch.optim.adam.adam_update` (same signature, same in-place effects, same order of
floating-point operations).

The parameters of one call are grouped by dtype; each group is one launch over a table of
addresses and sizes. Parameters the kernels cannot take (other dtypes, non-contiguous arrays,
a gradient of another dtype or shape) go through the generic update.
"""
import numpy as np

from ._launch import address, chunk_tables, ctype, i32, i64, rounded
from ._module import function
from ._source import TYPES, family

CHUNK = 65536          # elements per block
THREADS = 512

FAMILY = family("optimizers", "optimizers.cu",
                [f"multi_tensor_{opt}<{t}>" for opt in ("sgd", "adam") for t in TYPES],
                options=("--fmad=false",))


def _eligible(arrays):
    first = arrays[0]
    if ctype(first.dtype) is None:
        return False
    for a in arrays:
        if a is None:
            continue
        if a.dtype != first.dtype or a.shape != first.shape or not a.flags.c_contiguous:
            return False
    return True


def _groups(n, arrays_of):
    """``({dtype: [indices]}, [indices for the generic path])``."""
    groups, rest = {}, []
    for i in range(n):
        arrays = arrays_of(i)
        if _eligible(arrays):
            groups.setdefault(arrays[0].dtype, []).append(i)
        else:
            rest.append(i)
    return groups, rest


def _capturing():
    from ..graphs import capturing
    return capturing()


def _launch(xp, name, columns, sizes, extra_args):
    """One launch over tensors whose addresses are ``columns`` (one list per tensor)."""
    ptrs = xp.asarray(np.array(columns, dtype=np.uint64).reshape(-1))
    sizes_d = xp.asarray(np.asarray(sizes, dtype=np.int64))
    chunk_tensor, chunk_start = chunk_tables(xp, sizes, CHUNK)
    nblocks = int(chunk_tensor.shape[0])
    if nblocks:
        function(FAMILY.name, name)((nblocks,), (THREADS,),
                                    (ptrs, sizes_d, chunk_tensor, chunk_start, i64(CHUNK)) + extra_args)


def multi_tensor_sgd(params, grads, momentum_buffers, *, lr, weight_decay, momentum, dampening, nesterov,
                     maximize, xp, generic):
    """:func:`gputorch.optim.sgd.sgd_update` as one kernel launch per dtype; ``generic`` (that
    function) updates the parameters the kernel does not take."""
    sgd_update = generic
    if _capturing():    # the pointer tables would be host-to-device copies inside a CUDA graph
        return sgd_update(params, grads, momentum_buffers, lr=lr, weight_decay=weight_decay, momentum=momentum,
                          dampening=dampening, nesterov=nesterov, maximize=maximize, xp=xp)
    use_buf = momentum != 0
    groups, rest = _groups(len(params), lambda i: (params[i], grads[i],
                                                   momentum_buffers[i] if use_buf else None))
    flags = (1 if maximize else 0) | (2 if weight_decay != 0 else 0) | (4 if use_buf else 0) \
        | (8 if dampening != 0 else 0) | (16 if nesterov else 0)
    for dtype, idx in groups.items():
        fresh = []
        columns = []
        for i in idx:
            buf = None
            if use_buf:
                buf = momentum_buffers[i]
                fresh.append(1 if buf is None else 0)
                if buf is None:
                    buf = momentum_buffers[i] = xp.empty_like(params[i])
            columns.append([address(params[i]), address(grads[i]), 0 if buf is None else address(buf)])
        new_buffer = xp.asarray(np.array(fresh or [0] * len(idx), dtype=np.int32))
        extra = (new_buffer, rounded(-lr, dtype), rounded(weight_decay, dtype), rounded(momentum, dtype),
                 rounded(1 - dampening, dtype), i32(flags))
        _launch(xp, f"multi_tensor_sgd<{ctype(dtype)}>", columns, [params[i].size for i in idx], extra)
    if rest:
        bufs = [momentum_buffers[i] for i in rest] if use_buf else []
        sgd_update([params[i] for i in rest], [grads[i] for i in rest], bufs, lr=lr, weight_decay=weight_decay,
                   momentum=momentum, dampening=dampening, nesterov=nesterov, maximize=maximize, xp=xp)
        for j, i in enumerate(rest if use_buf else ()):
            momentum_buffers[i] = bufs[j]


def multi_tensor_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, amsgrad, beta1, beta2, lr,
                      weight_decay, eps, maximize, decoupled_weight_decay, xp, generic):
    """:func:`gputorch.optim.adam.adam_update` as one kernel launch per dtype; ``generic`` (that
    function) updates the parameters the kernel does not take."""
    adam_update = generic
    if _capturing():
        raise RuntimeError("Adam/AdamW cannot be captured into a CUDA graph in gputorch: its bias correction is "
                           "computed from step counts kept on the host, so every replay would repeat the captured "
                           "step's values (PyTorch's capturable=True, which keeps them on the device, is not "
                           "implemented); capture SGD, or keep optimizer.step() outside the graph")
    groups, rest = _groups(len(params), lambda i: (params[i], grads[i], exp_avgs[i], exp_avg_sqs[i],
                                                   max_exp_avg_sqs[i] if amsgrad else None))
    w = 1 - beta1
    flags = (1 if maximize else 0) | (2 if weight_decay != 0 else 0) | (4 if decoupled_weight_decay else 0) \
        | (8 if amsgrad else 0) | (16 if abs(w) < 0.5 else 0)
    for dtype, idx in groups.items():
        columns, scalars = [], []
        for i in idx:
            columns.append([address(params[i]), address(grads[i]), address(exp_avgs[i]), address(exp_avg_sqs[i]),
                            address(max_exp_avg_sqs[i]) if amsgrad else 0])
            step = steps[i]
            step_size = lr / (1 - beta1 ** step)
            scalars.append([rounded(-step_size, dtype), rounded((1 - beta2 ** step) ** 0.5, dtype)])
        extra = (xp.asarray(np.array(scalars, dtype=np.float64).reshape(-1)), rounded(w, dtype),
                 rounded(w - 1, dtype), rounded(beta2, dtype), rounded(1 - beta2, dtype),
                 rounded(weight_decay, dtype), rounded(1 - lr * weight_decay, dtype), rounded(eps, dtype), i32(flags))
        _launch(xp, f"multi_tensor_adam<{ctype(dtype)}>", columns, [params[i].size for i in idx], extra)
    if rest:
        adam_update([params[i] for i in rest], [grads[i] for i in rest], [exp_avgs[i] for i in rest],
                    [exp_avg_sqs[i] for i in rest], [max_exp_avg_sqs[i] for i in rest] if amsgrad else [],
                    [steps[i] for i in rest], amsgrad=amsgrad, beta1=beta1, beta2=beta2, lr=lr,
                    weight_decay=weight_decay, eps=eps, maximize=maximize,
                    decoupled_weight_decay=decoupled_weight_decay, xp=xp)


