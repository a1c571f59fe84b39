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
cummax = _structseq("cummax")
cummin = _structseq("cummin")
histogram = _structseq("histogram", ("hist", "bin_edges"))
histogramdd = _structseq("histogramdd", ("hist", "bin_edges"))
frexp = _structseq("frexp", ("mantissa", "exponent"))
aminmax = _structseq("aminmax", ("min", "max"))

# linear algebra (gputorch.linalg and the top-level decompositions)
linalg_cholesky_ex = _structseq("linalg_cholesky_ex", ("L", "info"))
linalg_inv_ex = _structseq("linalg_inv_ex", ("inverse", "info"))
linalg_solve_ex = _structseq("linalg_solve_ex", ("result", "info"))
linalg_qr = _structseq("linalg_qr", ("Q", "R"))
linalg_eigh = _structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_eig = _structseq("linalg_eig", ("eigenvalues", "eigenvectors"))
linalg_svd = _structseq("linalg_svd", ("U", "S", "Vh"))
linalg_slogdet = _structseq("linalg_slogdet", ("sign", "logabsdet"))
linalg_lstsq = _structseq("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
linalg_lu_factor = _structseq("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex = _structseq("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_lu = _structseq("linalg_lu", ("P", "L", "U"))
lu_unpack = _structseq("lu_unpack", ("P", "L", "U"))
geqrf = _structseq("geqrf", ("a", "tau"))
qr = _structseq("qr", ("Q", "R"))
svd = _structseq("svd", ("U", "S", "V"))
slogdet = _structseq("slogdet", ("sign", "logabsdet"))
