"""``gputorch.compile``: accepted so that PyTorch programs run, with no compilation.

gputorch has no graph compiler: every op already runs eagerly through its backend
(NumPy, or CuPy with hand-written kernels). ``compile`` therefore returns a callable
that behaves exactly like its argument:

* a function comes back as a thin wrapper that calls it;
* an ``nn.Module`` comes back wrapped in an :class:`OptimizedModule` (as in PyTorch),
  which holds the original as its child ``_orig_mod``. Calling it calls the original;
  ``parameters()`` yields the same Parameter objects; ``state_dict()`` keys carry the
  ``_orig_mod.`` prefix, as PyTorch's compiled modules' do; other attributes are
  looked up on the original.

With ``disable=True`` the argument itself is returned, as in PyTorch. Used without
a model (``@gputorch.compile(mode="max-autotune")``) it returns a decorator. The
first call logs once, at INFO level on the ``"gputorch.compile"`` logger, that no
compilation happens.
"""
import functools
import logging

from .nn.modules.module import Module

__all__ = ["compile", "OptimizedModule"]

_LOG = logging.getLogger("gputorch.compile")
_logged = [False]


def _log_once():
    if not _logged[0]:
        _logged[0] = True
        _LOG.info("gputorch.compile: no compilation happens in gputorch; the model runs eagerly, "
                  "op by op, with unchanged results")


class OptimizedModule(Module):
    """What ``compile(module)`` returns: a module that runs ``_orig_mod`` unchanged."""

    def __init__(self, mod):
        super().__init__()
        self._orig_mod = mod
        self.training = mod.training

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def __setattr__(self, name, value):
        modules = self.__dict__.get("_modules")
        if modules is not None and "_orig_mod" in modules and name not in ("training", "_orig_mod") \
                and name not in self.__dict__:
            setattr(modules["_orig_mod"], name, value)   # as in PyTorch: attributes land on the original
            return
        super().__setattr__(name, value)


def _wrap(model, disable):
    if disable:
        return model
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    _log_once()
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)

    compiled._torchdynamo_orig_callable = model
    return compiled


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,  # noqa: A001
            options=None, name=None, disable=False, recompile_limit=None, isolate_recompiles=False,
            shapes_spec=None):
    """Return ``model`` (a function or ``nn.Module``) in a form that behaves exactly like it.

    The keyword arguments are PyTorch's and are accepted without effect, except
    ``disable=True``, which returns ``model`` itself. ``mode`` and ``options`` cannot
    both be given (RuntimeError, as in PyTorch). Without ``model``, returns a decorator.
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if model is None:
        return lambda fn: _wrap(fn, disable)
    return _wrap(model, disable)
