"""conv modules."""
__all__ = []
