"""``gputorch.Size``: the shape of a tensor, a tuple subclass."""


class Size(tuple):
    """A tensor's shape, e.g. ``gputorch.Size([2, 3])``."""

    def __repr__(self):
        return f"gputorch.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))
