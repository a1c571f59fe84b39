"""nn modules: pixelshuffle (being written)"""
__all__ = []
