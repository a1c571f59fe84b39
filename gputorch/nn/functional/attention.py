"""Functional attention ops."""
__all__ = []
