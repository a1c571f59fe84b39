"""Broadcasting shapes, with PyTorch's error when they do not broadcast.

One definition for every op that broadcasts: ops call :func:`broadcast_shape`, and the
dispatcher turns a backend's broadcasting failure (NumPy's and CuPy's ``ValueError``) into
:func:`broadcast_error` for the op's tensor arguments.
"""


def broadcast_pair(a, b):
    """The broadcast of shapes ``a`` and ``b`` (tuples); RuntimeError naming the first dimension
    (counted in the result) where they disagree, as PyTorch words it."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                               f"non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def broadcast_shape(shapes):
    """The broadcast of several shapes, folded left to right (PyTorch's order: the error names
    the shape accumulated so far as tensor a and the next operand as tensor b)."""
    out = ()
    for s in shapes:
        out = broadcast_pair(out, s)
    return out


def broadcast_error(shapes):
    """The RuntimeError for operand ``shapes`` that do not broadcast (None if they do)."""
    try:
        broadcast_shape(shapes)
    except RuntimeError as exc:
        return exc
    return None
