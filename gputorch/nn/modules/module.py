"""module modules."""
__all__ = []
