"""Functional dropout ops."""
__all__ = []
