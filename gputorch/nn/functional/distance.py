"""nn.functional: distance (being written)"""
__all__ = []
