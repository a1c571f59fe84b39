"""The stack of active ``saved_tensors_hooks`` (pack, unpack) pairs."""
STACK = []
