"""Special functions of gputorch.special beyond the error and gamma functions. (being written)"""
__all__ = []
