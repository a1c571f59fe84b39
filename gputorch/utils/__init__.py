"""Utilities: ``hooks`` (removable handles), ``data`` (datasets, samplers, DataLoader), ``checkpoint``
(activation checkpointing) and ``dlpack``."""
