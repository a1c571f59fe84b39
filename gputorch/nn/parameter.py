"""Parameter."""
__all__ = []
