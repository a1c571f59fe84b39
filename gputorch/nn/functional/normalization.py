"""Functional normalization ops."""
__all__ = []
