"""Helpers shared by the op argument generators (``sig(b) -> (args, kwargs)``).

A signature draws the *source text* of an op's positional and keyword
arguments with a :class:`~tests.differential._inputs.CaseBuilder` ``b``;
``args[0]`` is the tensor a method is called on.
"""
from ._inputs import FLOAT_DTYPES, INT_DTYPES

INTEGRAL = ("bool",) + INT_DTYPES
NUMERIC = INT_DTYPES + FLOAT_DTYPES


# ------------------------------------------------------------------ helpers
def _kw(**kwargs):
    return {k: v for k, v in kwargs.items() if v is not None}


def other_operand(b, x, scalar_p=0.25):
    """Second operand of a binary op: a broadcastable tensor or a Python scalar."""
    if b.chance(scalar_p):
        return b.python_scalar()
    dtype = b.dtypes[x] if b.chance(0.5) else None
    return b.tensor(b.broadcast_partner(b.shapes[x]), dtype)


def ndim(b, x):
    return len(b.shapes[x])


def maybe_dim_kw(b, x, multi=False, required=False):
    """``dim`` for a reduction: absent, an int, or (if ``multi``) a tuple."""
    if not required and b.chance(0.3):
        return None
    if multi and b.chance(0.35):
        return repr(b.dims(ndim(b, x)))
    return str(b.dim(ndim(b, x)))


def bool_src(b):
    return b.choice(["True", "False"])


def grad_free(sig):
    """In-place variant: leaves rarely require grad, and dtypes lean to floating point.

    (Most in-place ops refuse to write a float result into an integer tensor;
    the lean keeps most cases past that check while still testing it.)
    """
    def wrapped(b):
        saved = b.grad, b.float_bias
        b.grad, b.float_bias = b.chance(0.15), 0.5
        try:
            return sig(b)
        finally:
            b.grad, b.float_bias = saved
    return wrapped
