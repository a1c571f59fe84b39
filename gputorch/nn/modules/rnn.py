"""rnn modules."""
__all__ = []
