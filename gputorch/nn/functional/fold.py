"""nn.functional: fold (being written)"""
__all__ = []
