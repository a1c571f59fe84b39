"""``gputorch.onnx``: export a model to ONNX from its traced graph (see ``gputorch.jit``).

``export(model, args, f, ...)`` traces ``model(*args)``, translates every recorded op to ONNX
opset 17 (``_ops.py`` lists what translates) and writes the model to ``f``, checked by
``onnx.checker`` first. Needs the ``onnx`` package (``pip install 'gputorch[onnx]'``, which also
installs ONNX Runtime to run the result).
"""
import enum

from ._export import OPSET, UnsupportedOperatorError, build_model

__all__ = ["export", "TrainingMode", "UnsupportedOperatorError", "is_in_onnx_export"]

_EXPORTING = [False]


class TrainingMode(enum.IntEnum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def is_in_onnx_export():
    return _EXPORTING[0]


def export(model, args, f, *, kwargs=None, input_names=None, output_names=None, dynamic_axes=None,
           opset_version=None, do_constant_folding=True, export_params=True, training=TrainingMode.EVAL,
           verbose=False, **unused):
    """Write the ONNX form of ``model(*args)`` to ``f`` (a path or a binary file object).

    ``dynamic_axes`` maps input/output names to the axes (a list, or ``{axis: name}``) whose size may
    change. ``training=TrainingMode.EVAL`` exports the model in eval mode (dropout off, batch-norm
    running statistics) and restores its mode afterwards. Returns None, as PyTorch's does.
    """
    from .. import nn
    import onnx as onnx_package   # noqa: F401 - the ImportError names the extra below otherwise
    if kwargs:
        raise NotImplementedError("onnx.export: keyword inputs (kwargs=) are not supported; pass them positionally")
    opset = OPSET if opset_version is None else int(opset_version)
    if opset != OPSET:
        raise ValueError(f"gputorch.onnx exports opset {OPSET} only (asked for opset {opset})")
    args = args if isinstance(args, tuple) else (args,)
    modes = None
    if isinstance(model, nn.Module) and training != TrainingMode.PRESERVE:
        modes = [(m, m.training) for m in model.modules()]
        model.train(training == TrainingMode.TRAINING)
    _EXPORTING[0] = True
    try:
        from ..autograd.grad_mode import no_grad
        with no_grad():
            proto = build_model(model, args, input_names, output_names, dynamic_axes, opset, export_params)
    finally:
        _EXPORTING[0] = False
        if modes is not None:
            for m, mode in modes:
                m.training = mode
    onnx_package.checker.check_model(proto, full_check=True)
    if verbose:
        print(onnx_package.helper.printable_graph(proto.graph))
    if hasattr(f, "write"):
        f.write(proto.SerializeToString())
    else:
        onnx_package.save(proto, f)
