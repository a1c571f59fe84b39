"""Functional vision ops."""
__all__ = []
