"""nn.utils.parametrizations (being written)"""
__all__ = []
