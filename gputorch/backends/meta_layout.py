"""Memory layout arithmetic for shape-only arrays: strides, contiguity, the layout NumPy gives a
new array, and whether a reshape can be a view.

Everything here works on plain tuples (shape in elements, strides in bytes), so the meta array
can mirror NumPy's layout decisions -- which results are views, which are copies and in what
order a copy is laid out -- without any memory.
"""
import math

__all__ = ["c_strides", "strides_in_order", "is_c_contiguous", "is_f_contiguous", "k_order",
           "nocopy_reshape_strides", "broadcast_strides"]


def c_strides(shape, itemsize):
    """Row-major strides of a freshly allocated array (NumPy gives an empty array zero strides)."""
    if 0 in shape:
        return (0,) * len(shape)
    strides = [0] * len(shape)
    step = itemsize
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = step
        step *= shape[i]
    return tuple(strides)


def strides_in_order(shape, itemsize, order):
    """Strides of a fresh array whose axes are laid out in ``order`` (outermost axis first)."""
    if 0 in shape:
        return (0,) * len(shape)
    strides = [0] * len(shape)
    step = itemsize
    for axis in reversed(order):
        strides[axis] = step
        step *= shape[axis]
    return tuple(strides)


def is_c_contiguous(shape, strides, itemsize):
    """Row-major contiguity; size-1 dims may have any stride (NumPy's relaxed rule)."""
    if 0 in shape:
        return True
    expected = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def is_f_contiguous(shape, strides, itemsize):
    if 0 in shape:
        return True
    expected = itemsize
    for n, s in zip(shape, strides):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def broadcast_strides(shape, strides, out_shape):
    """An operand's strides when broadcast to ``out_shape`` (0 along the broadcast dims)."""
    lead = len(out_shape) - len(shape)
    out = [0] * len(out_shape)
    for i, (n, s) in enumerate(zip(shape, strides)):
        out[lead + i] = s if n == out_shape[lead + i] else 0
    return tuple(out)


def k_order(ndim, operand_strides):
    """The axis order (outermost first) NumPy's ``order='K'`` picks for an output.

    Axes are sorted by the operands' strides, innermost first, with a stable insertion sort: an
    axis moves inward past another when the first operand that strides along both says so, and
    any operand disagreeing keeps row-major order. Operands with a zero stride on either axis
    abstain; when all abstain the axis keeps looking further out.
    """
    order = list(range(ndim - 1, -1, -1))       # innermost first
    if not operand_strides:
        return list(range(ndim))
    for i in range(1, ndim):
        axis = order[i]
        pos = i
        for j in range(i - 1, -1, -1):
            other = order[j]
            move = None
            for st in operand_strides:
                a, b = st[axis], st[other]
                if a and b:
                    if abs(b) <= abs(a):
                        move = False
                    elif move is None:
                        move = True
            if move is None:
                continue
            if move:
                pos = j
            else:
                break
        if pos != i:
            order.insert(pos, order.pop(i))
    order.reverse()
    return order


def k_strides(shape, itemsize, operand_strides):
    """Strides of a fresh ``order='K'`` result of ``shape`` over operands with these (broadcast) strides."""
    if not operand_strides or len(shape) < 2:
        return c_strides(shape, itemsize)
    return strides_in_order(shape, itemsize, k_order(len(shape), operand_strides))


def nocopy_reshape_strides(shape, strides, new_shape, itemsize):
    """Strides for viewing an array of ``shape``/``strides`` as ``new_shape`` without copying
    (row-major order), or None when the data would have to be copied."""
    if math.prod(shape) == 0:
        return c_strides(new_shape, itemsize) if 0 in new_shape else None
    # Size-1 dims never constrain a view: drop them from the old layout.
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    new_strides = [0] * len(new_shape)
    oi = ni = 0
    n_old, n_new = len(old), len(new_shape)
    while oi < n_old and ni < n_new:
        # Grow one chunk on each side until their element counts agree.
        oj, nj = oi + 1, ni + 1
        old_count, new_count = old[oi][0], new_shape[ni]
        while old_count != new_count:
            if old_count < new_count:
                if oj >= n_old:
                    return None
                old_count *= old[oj][0]
                oj += 1
            else:
                if nj >= n_new:
                    return None
                new_count *= new_shape[nj]
                nj += 1
        # The old chunk must be one contiguous run of memory.
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        step = old[oj - 1][1]
        for k in range(nj - 1, ni - 1, -1):
            new_strides[k] = step
            step *= new_shape[k]
        oi, ni = oj, nj
    # Trailing size-1 dims of the new shape.
    last = new_strides[ni - 1] if ni > 0 else itemsize
    for k in range(ni, n_new):
        if new_shape[k] != 1:
            return None
        new_strides[k] = last
    if oi < n_old:
        return None
    return tuple(new_strides)
