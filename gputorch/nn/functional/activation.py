"""Functional activation ops."""
__all__ = []
