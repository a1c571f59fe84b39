"""Utilities: ``hooks`` (removable handles); data loading and checkpointing come later."""
