"""Functional loss ops."""
__all__ = []
