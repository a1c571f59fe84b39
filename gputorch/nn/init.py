"""nn.init."""
