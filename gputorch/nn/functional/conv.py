"""Functional conv ops."""
__all__ = []
