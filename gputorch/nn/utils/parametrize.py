"""nn.utils.parametrize (being written)"""
__all__ = []
