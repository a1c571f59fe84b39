"""Named result tuples, like ``torch.return_types``: ``x.max(0).values``, ``.indices``.

Each type is a :func:`collections.namedtuple` defined at module level here, so results
pickle and print as ``gputorch.return_types.max(values=..., indices=...)``. Ops that return
several tensors add their type here.
"""
import collections


def _structseq(name, fields=("values", "indices")):
    cls = collections.namedtuple(name, fields)
    cls.__module__ = __name__
    return cls


max = _structseq("max")  # noqa: A001 - PyTorch's name
min = _structseq("min")  # noqa: A001
sort = _structseq("sort")
topk = _structseq("topk")
kthvalue = _structseq("kthvalue")
median = _structseq("median")
nanmedian = _structseq("nanmedian")
mode = _structseq("mode")
