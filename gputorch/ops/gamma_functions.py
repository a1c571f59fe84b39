"""Gamma-family functions (lgamma, digamma, polygamma, mvlgamma) and gamma/Dirichlet/Poisson sampling. (being written)"""
__all__ = []
