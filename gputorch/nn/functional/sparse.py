"""Functional sparse ops."""
__all__ = []
