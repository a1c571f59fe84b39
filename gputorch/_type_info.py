"""finfo and iinfo (being written)"""
__all__ = []
