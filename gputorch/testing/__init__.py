"""gputorch.testing (being written)"""
__all__ = []
