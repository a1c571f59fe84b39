"""nn.functional: pixel_shuffle (being written)"""
__all__ = []
