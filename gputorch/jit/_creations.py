"""Tensor-creating calls a trace records (they have no tensor inputs, so the dispatcher never sees
them): each is a class with ``create(**params)``, which the replay calls, and a ``kind`` for
printing and for the ONNX translation."""
__all__ = ["CREATIONS"]


class Arange:
    """``arange(start, end, step, dtype=, device=)``: positions made from a traced size."""

    @staticmethod
    def create(start, end, step, dtype, device):
        from ..ops.creation import arange
        return arange(start, end, step, dtype=dtype, device=device)


CREATIONS = {"arange": Arange}
