"""The op registry: which functions become Tensor methods and operators.

Each op module defines its public functions once and declares here, with
:func:`tensor_method`, the Tensor method and operator names they also serve.
``attach_methods`` (run once at import) puts them on :class:`gputorch.Tensor`.
"""
METHODS = {}


def tensor_method(*names):
    """Decorator: also expose the function as ``Tensor.<name>`` for each name."""
    def register(fn):
        for name in names:
            if name in METHODS and METHODS[name] is not fn:
                raise RuntimeError(f"Tensor.{name} is defined twice ({METHODS[name].__module__} "
                                   f"and {fn.__module__})")
            METHODS[name] = fn
        return fn
    return register


def reflected(fn):
    """``other <op> self`` for Python's reflected operators (``__rsub__`` etc.)."""
    def method(self, other, **kwargs):
        return fn(other, self, **kwargs)
    method.__name__ = "r" + fn.__name__
    method.__doc__ = f"Reflected {fn.__name__}: ``other {fn.__name__} self``."
    return method


def attach_methods(cls):
    for name, fn in METHODS.items():
        setattr(cls, name, fn)
