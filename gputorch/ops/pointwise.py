"""pointwise ops."""
__all__ = []
