"""transformer modules."""
__all__ = []
