"""quantile and nanquantile (being written)"""
__all__ = []
