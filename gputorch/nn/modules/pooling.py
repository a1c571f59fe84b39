"""pooling modules."""
__all__ = []
