"""sparse modules."""
__all__ = []
