"""Functional pooling ops."""
__all__ = []
