"""Legacy tensor types: FloatTensor, LongTensor, cuda.FloatTensor, ... (being written)"""
__all__ = []
