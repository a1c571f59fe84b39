"""Ternary pointwise ops: addcmul, addcdiv."""
__all__ = []
