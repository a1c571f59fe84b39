"""ONNX forms of elementwise arithmetic, comparisons, logic, clamping and the fused matrix products
(``addmm``, ``baddbmm``). Operands follow PyTorch's type promotion: each is cast to the dtype the
op computes in (the result's dtype for arithmetic, the promoted operand dtype for comparisons), so
``int_tensor + float_tensor`` or ``int_tensor / 2`` export as they run."""
import numpy as np

from .. import _dtype

__all__ = ["ARITHMETIC_EXPORTERS", "erf_of"]


def _out_dtype(b, node):
    return b.info(node.outputs[0])[1]


def _unary(op_type, to_result=True):
    """``op_type`` of argument 0, cast first to the result dtype (``sqrt`` of an int tensor is float)."""
    def export(b, node):
        x = b.operand(node, 0, _out_dtype(b, node)) if to_result else b.arg(node, 0)
        return b.add(op_type, [x], node.outputs)
    return export


def _binary(op_type):
    """``op_type`` of arguments 0 and 1, both in the result dtype."""
    def export(b, node):
        dt = _out_dtype(b, node)
        return b.add(op_type, [b.operand(node, 0, dt), b.operand(node, 1, dt)], node.outputs)
    return export


def _compare(op_type):
    """A comparison (or ``maximum``/``minimum``) of arguments 0 and 1 in their promoted dtype."""
    def export(b, node):
        dt = b.common_dtype(node, (0, 1))
        return b.add(op_type, [b.operand(node, 0, dt), b.operand(node, 1, dt)], node.outputs)
    return export


def _not_equal(b, node):
    dt = b.common_dtype(node, (0, 1))
    eq = b.add("Equal", [b.operand(node, 0, dt), b.operand(node, 1, dt)], [b.fresh()])[0]
    return b.add("Not", [eq], node.outputs)


def _logical(op_type):
    """``&``, ``|``, ``^`` of bool tensors (ONNX's bitwise ops on integers need opset 18)."""
    def export(b, node):
        if _out_dtype(b, node) is not _dtype.bool:
            b.fail(node, "a bitwise op on integers (opset 18)")
        return b.add(op_type, [b.operand(node, 0, _dtype.bool), b.operand(node, 1, _dtype.bool)], node.outputs)
    return export


def _bitwise_not(b, node):
    if _out_dtype(b, node) is not _dtype.bool:
        b.fail(node, "a bitwise not on integers (opset 18)")
    return b.add("Not", [b.arg(node, 0)], node.outputs)


def _add_sub(op_type):
    def export(b, node):
        dt = _out_dtype(b, node)
        alpha = node.args[2][1] if len(node.args) > 2 else node.params.get("alpha", 1)
        other = b.operand(node, 1, dt)
        if alpha != 1:
            other = b.add("Mul", [other, b.const(np.array(alpha, dt.np))], [b.fresh()])[0]
        return b.add(op_type, [b.operand(node, 0, dt), other], node.outputs)
    return export


def _floor_of_quotient(b, x, y, dt, out):
    """``floor(x / y)``: exact for integers (``x - x mod y`` divides evenly; ``Mod`` takes the
    divisor's sign, as Python does), ``Floor(Div)`` for floats."""
    if dt.is_floating_point:
        return b.add("Floor", [b.add("Div", [x, y], [b.fresh()])[0]], [out])[0]
    rem = b.add("Mod", [x, y], [b.fresh()], fmod=0)[0]
    return b.add("Div", [b.add("Sub", [x, rem], [b.fresh()])[0], y], [out])[0]


def _div(b, node):
    dt = _out_dtype(b, node)
    x, y = b.operand(node, 0, dt), b.operand(node, 1, dt)
    mode = node.params.get("rounding_mode")
    if mode == "floor":
        return [_floor_of_quotient(b, x, y, dt, node.outputs[0])]
    if mode == "trunc" and dt.is_floating_point:
        q = b.add("Div", [x, y], [b.fresh()])[0]
        magnitude = b.add("Floor", [b.add("Abs", [q], [b.fresh()])[0]], [b.fresh()])[0]
        return b.add("Mul", [b.add("Sign", [q], [b.fresh()])[0], magnitude], node.outputs)
    return b.add("Div", [x, y], node.outputs)     # true division, or integer division that truncates


def _floor_divide(b, node):
    dt = _out_dtype(b, node)
    return [_floor_of_quotient(b, b.operand(node, 0, dt), b.operand(node, 1, dt), dt, node.outputs[0])]


def _remainder(b, node):
    """Python's modulo (the divisor's sign): ``Mod`` for integers, ``x - floor(x / y) * y`` for floats."""
    dt = _out_dtype(b, node)
    x, y = b.operand(node, 0, dt), b.operand(node, 1, dt)
    if not dt.is_floating_point:
        return b.add("Mod", [x, y], node.outputs, fmod=0)
    q = _floor_of_quotient(b, x, y, dt, b.fresh())
    return b.add("Sub", [x, b.add("Mul", [q, y], [b.fresh()])[0]], node.outputs)


def erf_of(b, x, dt):
    """``Erf(x)``; ONNX Runtime has no float64 ``Erf``, so a float64 ``x`` is taken through float32
    (relative error about 1e-7)."""
    if dt is not _dtype.float64:
        return b.add("Erf", [x], [b.fresh()])[0]
    single = b.add("Cast", [x], [b.fresh()], to=b.onnx_dtype(_dtype.float32))[0]
    return b.add("Cast", [b.add("Erf", [single], [b.fresh()])[0]], [b.fresh()], to=b.onnx_dtype(dt))[0]


def _erf(b, node):
    dt = _out_dtype(b, node)
    return b.add("Identity", [erf_of(b, b.operand(node, 0, dt), dt)], node.outputs)


def _rsqrt(b, node):
    root = b.add("Sqrt", [b.operand(node, 0, _out_dtype(b, node))], [b.fresh()])[0]
    return b.add("Reciprocal", [root], node.outputs)


def _clamp(b, node):
    """``clamp(x, min, max)``: ``Clip`` for Python bounds, ``Max``/``Min`` for tensor bounds (either may
    be absent; ``ClampMin``/``ClampMax`` carry one)."""
    dt = _out_dtype(b, node)
    absent = ("const", None)
    if node.kind == "Clamp":
        bounds = (node.args[1], node.args[2])
    else:
        bounds = (node.args[1], absent) if node.kind == "ClampMin" else (absent, node.args[1])
    x = b.operand(node, 0, dt)

    def bound(ref):
        if ref[0] == "value":
            return b.cast(ref[1], dt)
        return None if ref[1] is None else b.const(np.array(ref[1], dt.np))
    low, high = bound(bounds[0]), bound(bounds[1])
    if all(r[0] != "value" for r in bounds):
        return b.add("Clip", [x, low or "", high or ""], node.outputs)
    if low is not None:
        x = b.add("Max", [x, low], [b.fresh() if high is not None else node.outputs[0]])[0]
    if high is not None:
        x = b.add("Min", [x, high], node.outputs)[0]
    return [x]


def _where(b, node):
    dt = _out_dtype(b, node)
    return b.add("Where", [b.arg(node, 0), b.operand(node, 1, dt), b.operand(node, 2, dt)], node.outputs)


def _masked_fill(b, node):
    dt = _out_dtype(b, node)
    return b.add("Where", [b.arg(node, 1), b.operand(node, 2, dt), b.arg(node, 0)], node.outputs)


def _scaled(b, name, factor, dt):
    return name if factor == 1 else b.add("Mul", [name, b.const(np.array(factor, dt.np))], [b.fresh()])[0]


def _addmm(b, node):
    """``beta * input + alpha * (m1 @ m2)`` as one ``Gemm``; ``beta == 0`` ignores ``input``, as PyTorch does."""
    dt = _out_dtype(b, node)
    beta, alpha = float(node.args[3][1]), float(node.args[4][1])
    if beta == 0:
        product = b.add("MatMul", [b.arg(node, 1), b.arg(node, 2)], [b.fresh()])[0]
        return b.add("Identity", [_scaled(b, product, alpha, dt)], node.outputs)
    return b.add("Gemm", [b.arg(node, 1), b.arg(node, 2), b.arg(node, 0)], node.outputs, alpha=alpha, beta=beta)


def _baddbmm(b, node):
    """``beta * input + alpha * (batch1 @ batch2)`` (``addbmm``-style fused form of attention scores)."""
    dt = _out_dtype(b, node)
    beta, alpha = node.args[3][1], node.args[4][1]
    product = _scaled(b, b.add("MatMul", [b.arg(node, 1), b.arg(node, 2)], [b.fresh()])[0], alpha, dt)
    if beta == 0:
        return b.add("Identity", [product], node.outputs)
    return b.add("Add", [_scaled(b, b.arg(node, 0), beta, dt), product], node.outputs)


def _addc(op_type):
    """``addcmul``/``addcdiv``: ``input + value * (t1 op t2)``."""
    def export(b, node):
        dt = _out_dtype(b, node)
        combined = b.add(op_type, [b.operand(node, 1, dt), b.operand(node, 2, dt)], [b.fresh()])[0]
        return b.add("Add", [b.operand(node, 0, dt), _scaled(b, combined, node.params.get("value", 1), dt)],
                     node.outputs)
    return export


def _einsum(b, node):
    """ONNX's ``Einsum``, its equation spelled from the traced labels (one letter per label)."""
    letters = {}

    def spell(labels):
        return "".join(letters.setdefault(label, chr(ord("a") + len(letters))) for label in labels)
    inputs = ",".join(spell(labels) for labels in node.params["in_labels"])
    equation = f"{inputs}->{spell(node.params['out_labels'])}"
    return b.add("Einsum", [b.arg(node, i) for i in range(len(node.args))], node.outputs, equation=equation)


def _lerp(b, node):
    """``start + weight * (end - start)``."""
    dt = _out_dtype(b, node)
    start, end, weight = (b.operand(node, i, dt) for i in range(3))
    step = b.add("Mul", [weight, b.add("Sub", [end, start], [b.fresh()])[0]], [b.fresh()])[0]
    return b.add("Add", [start, step], node.outputs)


ARITHMETIC_EXPORTERS = {
    "Add": _add_sub("Add"), "Sub": _add_sub("Sub"), "Mul": _binary("Mul"), "Div": _div, "Pow": _binary("Pow"),
    "FloorDivide": _floor_divide, "Remainder": _remainder, "Lerp": _lerp,
    "Maximum": _compare("Max"), "Minimum": _compare("Min"),
    "Neg": _unary("Neg"), "Abs": _unary("Abs"), "Exp": _unary("Exp"), "Log": _unary("Log"),
    "Sqrt": _unary("Sqrt"), "Rsqrt": _rsqrt, "Reciprocal": _unary("Reciprocal"), "Sin": _unary("Sin"),
    "Cos": _unary("Cos"), "Tan": _unary("Tan"), "Erf": _erf, "Sign": _unary("Sign"),
    "Floor": _unary("Floor"), "Ceil": _unary("Ceil"), "Round": _unary("Round"),
    "Isnan": _unary("IsNaN", False), "Isinf": _unary("IsInf", False),
    "Eq": _compare("Equal"), "Ne": _not_equal, "Lt": _compare("Less"), "Le": _compare("LessOrEqual"),
    "Gt": _compare("Greater"), "Ge": _compare("GreaterOrEqual"), "LogicalNot": _unary("Not", False),
    "BitwiseAnd": _logical("And"), "BitwiseOr": _logical("Or"), "BitwiseXor": _logical("Xor"),
    "LogicalAnd": _logical("And"), "LogicalOr": _logical("Or"), "LogicalXor": _logical("Xor"),
    "BitwiseNot": _bitwise_not,
    "Clamp": _clamp, "ClampMin": _clamp, "ClampMax": _clamp, "Where": _where, "MaskedFill": _masked_fill,
    "Addmm": _addmm, "Baddbmm": _baddbmm, "Addcmul": _addc("Mul"), "Addcdiv": _addc("Div"), "Einsum": _einsum,
}
