"""gputorch.accelerator (being written)"""
__all__ = []
