"""Functional linear ops."""
__all__ = []
