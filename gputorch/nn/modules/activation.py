"""activation modules."""
__all__ = []
