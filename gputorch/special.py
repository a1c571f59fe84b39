"""gputorch.special (being written)"""
__all__ = []
