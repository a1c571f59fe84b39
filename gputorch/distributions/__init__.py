"""gputorch.distributions (being written)"""
__all__ = []
