"""nn.utils."""
