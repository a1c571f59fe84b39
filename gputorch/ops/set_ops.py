"""Set-like ops: unique, unique_consecutive, isin (being written)"""
__all__ = []
