"""Named result tuples of the linear-algebra ops, printed and named as ``torch.return_types``'s.

They belong with the others in ``gputorch/return_types.py``; until they move there, each type
here says it lives in that module only by name (pickling needs the move).
"""
import collections

__all__ = ["linalg_cholesky_ex", "linalg_inv_ex", "linalg_solve_ex", "linalg_qr", "linalg_eigh",
           "linalg_svd", "linalg_slogdet", "linalg_lstsq", "qr", "svd", "slogdet"]


def _result_type(name, fields):
    from .. import return_types
    existing = getattr(return_types, name, None)
    if existing is not None:
        return existing
    cls = collections.namedtuple(name, fields)
    cls.__module__ = "gputorch.return_types"
    return cls


linalg_cholesky_ex = _result_type("linalg_cholesky_ex", ("L", "info"))
linalg_inv_ex = _result_type("linalg_inv_ex", ("inverse", "info"))
linalg_solve_ex = _result_type("linalg_solve_ex", ("result", "info"))
linalg_qr = _result_type("linalg_qr", ("Q", "R"))
linalg_eigh = _result_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_svd = _result_type("linalg_svd", ("U", "S", "Vh"))
linalg_slogdet = _result_type("linalg_slogdet", ("sign", "logabsdet"))
linalg_lstsq = _result_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
qr = _result_type("qr", ("Q", "R"))
svd = _result_type("svd", ("U", "S", "V"))
slogdet = _result_type("slogdet", ("sign", "logabsdet"))
