"""nn modules: lazy (being written)"""
__all__ = []
