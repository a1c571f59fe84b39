"""gputorch.linalg decompositions and what is built on them: values and gradients against torch
(float64, batched), gradcheck, errors."""
import math

import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck
from tests._helpers import assert_close

RTOL, ATOL = 1e-10, 1e-10


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def compare(g_fn, t_fn, arrays, device, grad=True, rtol=RTOL, atol=ATOL):
    """Run both libraries on the same float64 inputs; compare every output and the gradients of a
    random weighted sum of the floating outputs that require grad."""
    torch = pytest.importorskip("torch")
    g_in = [gputorch.tensor(a, device=device, requires_grad=grad) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=grad) for a in arrays]
    g_out, t_out = _flat(g_fn(*g_in)), _flat(t_fn(*t_in))
    assert len(g_out) == len(t_out)
    for g, t in zip(g_out, t_out):
        assert_close(g, t, rtol=rtol, atol=atol)
    if not grad:
        return g_out
    rng = np.random.default_rng(3)
    g_loss = t_loss = 0
    for g, t in zip(g_out, t_out):
        if t.requires_grad and t.numel():
            w = rng.standard_normal(tuple(t.shape))
            g_loss = g_loss + (g * gputorch.tensor(w, device=device)).sum()
            t_loss = t_loss + (t * torch.tensor(w)).sum()
    g_loss.backward()
    t_loss.backward()
    for g, t in zip(g_in, t_in):
        assert_close(g.grad, t.grad, rtol=1e-8, atol=1e-9)
    return g_out


def gt(a, device, requires_grad=True):
    return gputorch.tensor(a, device=device, requires_grad=requires_grad)


RNG = np.random.default_rng(11)
SQUARE = RNG.standard_normal((2, 4, 4))
SPD = SQUARE @ SQUARE.transpose(0, 2, 1) + np.eye(4)
SYM = SQUARE + SQUARE.transpose(0, 2, 1)
TALL = RNG.standard_normal((2, 4, 3))
WIDE = RNG.standard_normal((2, 3, 5))
LOWER = np.tril(SQUARE) + 3 * np.eye(4)
RHS = RNG.standard_normal((2, 4, 2))


def symmetric(x):
    return (x + x.mT) / 2


# ---------------------------------------------------------------- Cholesky and triangular solves
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(upper, device):
    torch = pytest.importorskip("torch")
    out = compare(lambda a: gputorch.linalg.cholesky(a, upper=upper),
                  lambda a: torch.linalg.cholesky(a, upper=upper), [SPD], device)
    assert out[0].grad_fn.name() == "LinalgCholeskyExBackward0"
    assert gradcheck(lambda a: gputorch.linalg.cholesky(symmetric(a), upper=upper), (gt(SPD[:1, :3, :3], device),))
    compare(lambda a: gputorch.linalg.cholesky_ex(a), lambda a: torch.linalg.cholesky_ex(a), [SPD], device)
    compare(lambda a: gputorch.cholesky(a, upper), lambda a: torch.cholesky(a, upper), [SPD[0]], device)


def test_cholesky_errors(device):
    bad = gputorch.tensor([[[1.0, 0], [0, 1]], [[1.0, 2], [2, 1]]], dtype=gputorch.float64, device=device)
    with pytest.raises(gputorch.linalg.LinAlgError, match=r"\(Batch element 1\): The factorization could not be "
                       r"completed because the input is not positive-definite \(the leading minor of order 2"):
        gputorch.linalg.cholesky(bad)
    L, info = gputorch.linalg.cholesky_ex(bad)
    assert info.dtype is gputorch.int32 and info.tolist() == [0, 2]
    assert_close(L[0], np.eye(2))
    with pytest.raises(gputorch.linalg.LinAlgError, match="leading minor of order 2"):
        gputorch.linalg.cholesky_ex(bad, check_errors=True)
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        gputorch.linalg.cholesky(gputorch.ones(2, 2, dtype=gputorch.int64, device=device))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are 2 by 3 matrices"):
        gputorch.linalg.cholesky(gputorch.ones(2, 3, device=device))
    assert issubclass(gputorch.linalg.LinAlgError, RuntimeError)


@pytest.mark.parametrize("upper, left, unit", [(False, True, False), (True, True, True), (False, False, True),
                                               (True, False, False)])
def test_solve_triangular(upper, left, unit, device):
    torch = pytest.importorskip("torch")
    a = LOWER.transpose(0, 2, 1) if upper else LOWER
    b = RHS if left else RHS.transpose(0, 2, 1)
    out = compare(lambda x, y: gputorch.linalg.solve_triangular(x, y, upper=upper, left=left, unitriangular=unit),
                  lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper, left=left, unitriangular=unit),
                  [a, b], device)
    assert out[0].shape == b.shape
    assert gradcheck(lambda x, y: gputorch.linalg.solve_triangular(x, y, upper=upper, left=left, unitriangular=unit),
                     (gt(a[:1, :3, :3], device), gt(b[:1, :3, :2] if left else b[:1, :2, :3], device)))


def test_solve_triangular_broadcast_and_errors(device):
    torch = pytest.importorskip("torch")
    compare(lambda x, y: gputorch.linalg.solve_triangular(x, y, upper=False),
            lambda x, y: torch.linalg.solve_triangular(x, y, upper=False), [LOWER[0], RHS], device)
    a = gputorch.eye(2, device=device)
    with pytest.raises(TypeError, match="upper"):
        gputorch.linalg.solve_triangular(a, a)
    with pytest.raises(RuntimeError, match="The input tensor B must have at least 2 dimensions"):
        gputorch.linalg.solve_triangular(a, gputorch.ones(2, device=device), upper=False)
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation XA = B \(2x2 and 1x3\)"):
        gputorch.linalg.solve_triangular(a, gputorch.ones(1, 3, device=device), upper=False, left=False)
    with pytest.raises(NotImplementedError, match="\"triangular_solve_cpu\" not implemented for 'Long'"):
        gputorch.linalg.solve_triangular(a.long(), a.long(), upper=False)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(upper, device):
    torch = pytest.importorskip("torch")
    factor = LOWER.transpose(0, 2, 1) if upper else LOWER
    compare(lambda b, f: gputorch.cholesky_solve(b, f, upper), lambda b, f: torch.cholesky_solve(b, f, upper),
            [RHS, factor], device)
    compare(lambda f: gputorch.cholesky_inverse(f, upper), lambda f: torch.cholesky_inverse(f, upper),
            [factor], device)
    compare(lambda b, f: b.cholesky_solve(f, upper), lambda b, f: b.cholesky_solve(f, upper), [RHS[0], factor[0]],
            device)
    with pytest.raises(RuntimeError, match="b should have at least 2 dimensions, but has 1 dimensions instead"):
        gputorch.cholesky_solve(gputorch.ones(2, device=device), gputorch.eye(2, device=device))


# ---------------------------------------------------------------- QR
@pytest.mark.parametrize("shape", [TALL, WIDE, SQUARE], ids=["tall", "wide", "square"])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(shape, mode, device):
    torch = pytest.importorskip("torch")
    differentiable = mode == "reduced" or (mode == "complete" and shape.shape[-2] <= shape.shape[-1])
    compare(lambda a: gputorch.linalg.qr(a, mode), lambda a: torch.linalg.qr(a, mode), [shape], device,
            grad=differentiable)
    if differentiable:
        assert gradcheck(lambda a: tuple(gputorch.linalg.qr(a, mode)), (gt(shape[:1], device),))


def test_qr_errors_and_legacy(device):
    torch = pytest.importorskip("torch")
    a = gt(TALL, device)
    q, r = gputorch.linalg.qr(a, "r")
    assert q.shape == (0,)
    with pytest.raises(RuntimeError, match="The derivative of linalg.qr depends on Q"):
        r.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        gputorch.linalg.qr(a, "complete").Q.sum().backward()
    with pytest.raises(RuntimeError, match="qr received unrecognized mode 'x'"):
        gputorch.linalg.qr(a, "x")
    with pytest.raises(RuntimeError, match="linalg.qr: Expected a floating point or complex tensor as input. Got Long"):
        gputorch.linalg.qr(gputorch.ones(2, 2, dtype=gputorch.int64, device=device))
    compare(lambda x: gputorch.qr(x, False), lambda x: torch.linalg.qr(x, "complete"), [WIDE], device)
    assert type(gputorch.qr(a)).__name__ == "qr" and a.qr().R.shape == (2, 3, 3)


# ---------------------------------------------------------------- eigh and SVD (vectors are defined up to sign)
def _fix_columns(v, ref_row=0):
    """Multiply each column by the sign of its entry in row ``ref_row`` (sign-free comparisons)."""
    return v * v[..., ref_row:ref_row + 1, :].sign()


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(uplo, device):
    torch = pytest.importorskip("torch")
    out = compare(lambda a: (lambda w, v: (w, _fix_columns(v)))(*gputorch.linalg.eigh(a, uplo)),
                  lambda a: (lambda w, v: (w, _fix_columns(v)))(*torch.linalg.eigh(a, uplo)), [SYM], device)
    v = out[1]
    assert_close(v.mT @ v, np.eye(4)[None].repeat(2, 0), atol=1e-12)
    compare(lambda a: gputorch.linalg.eigvalsh(a, uplo), lambda a: torch.linalg.eigvalsh(a, uplo), [SYM], device)
    assert gradcheck(lambda a: (lambda w, v: (w, _fix_columns(v)))(*gputorch.linalg.eigh(symmetric(a))),
                     (gt(SYM[:1, :3, :3], device),))


def test_eigh_repeated_eigenvalues(device):
    torch = pytest.importorskip("torch")
    eye = np.eye(3)
    compare(gputorch.linalg.eigvalsh, torch.linalg.eigvalsh, [eye], device)    # eigenvalues only: finite
    a = gt(eye, device)
    gputorch.linalg.eigh(a).eigenvectors.abs().sum().backward()
    t = torch.tensor(eye, requires_grad=True)
    torch.linalg.eigh(t).eigenvectors.abs().sum().backward()
    assert np.isnan(t.grad.numpy()).all() and np.isnan(np.asarray(a.grad.cpu()._data)).all()
    with pytest.raises(NotImplementedError, match="\"linalg_eigh_cpu\" not implemented for 'Long'"):
        gputorch.linalg.eigh(gputorch.ones(2, 2, dtype=gputorch.int64, device=device))
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        gputorch.linalg.eigh(a, "X")


def _svd_fixed(lib_svd, full):
    def run(a):
        u, s, vh = lib_svd(a, full)
        k = s.shape[-1]
        sign = u[..., :1, :k].sign()
        return u[..., :, :k] * sign, s, vh[..., :k, :] * sign.mT
    return run


@pytest.mark.parametrize("shape", [TALL, WIDE, SQUARE], ids=["tall", "wide", "square"])
@pytest.mark.parametrize("full", [True, False])
def test_svd(shape, full, device):
    torch = pytest.importorskip("torch")
    compare(_svd_fixed(gputorch.linalg.svd, full), _svd_fixed(torch.linalg.svd, full), [shape], device)
    u, s, vh = gputorch.linalg.svd(gt(shape, device, False), full)
    m, n = shape.shape[-2:]
    assert u.shape[-1] == (m if full else min(m, n)) and vh.shape[-2] == (n if full else min(m, n))
    compare(gputorch.linalg.svdvals, torch.linalg.svdvals, [shape], device)
    if not full:
        assert gradcheck(_svd_fixed(gputorch.linalg.svd, False), (gt(shape[:1], device),))


def test_svd_legacy_and_singular_values_only(device):
    torch = pytest.importorskip("torch")

    def fixed(lib):
        def run(a):
            u, s, v = lib.svd(a)
            sign = u[..., :1, :].sign()
            return u * sign, s, v * sign
        return run
    compare(fixed(gputorch), fixed(torch), [TALL], device)
    u, s, v = gputorch.svd(gt(TALL, device), compute_uv=False)
    assert u.shape == (2, 4, 4) and v.shape == (2, 3, 3) and not u.any()
    compare(lambda a: gputorch.linalg.svdvals(a), lambda a: torch.linalg.svdvals(a), [np.zeros((2, 2))], device)
    with pytest.raises(RuntimeError, match="linalg.svd: Expected a floating point or complex tensor as input"):
        gputorch.linalg.svd(gputorch.ones(2, 2, dtype=gputorch.int64, device=device))


# ---------------------------------------------------------------- built on the SVD
@pytest.mark.parametrize("kwargs", [{}, {"atol": 1.0}, {"rtol": 0.3}, {"hermitian": True}])
def test_pinv(kwargs, device):
    torch = pytest.importorskip("torch")
    data = SYM if kwargs.get("hermitian") else TALL
    compare(lambda a: gputorch.linalg.pinv(a, **kwargs), lambda a: torch.linalg.pinv(a, **kwargs), [data], device,
            rtol=1e-9, atol=1e-9)
    compare(lambda a: gputorch.linalg.matrix_rank(a, **kwargs), lambda a: torch.linalg.matrix_rank(a, **kwargs),
            [data], device, grad=False)
    if not kwargs:
        assert gradcheck(gputorch.linalg.pinv, (gt(TALL[:1], device),))
        compare(lambda a: a.pinverse(), lambda a: a.pinverse(), [WIDE], device, rtol=1e-9, atol=1e-9)


def test_matrix_rank_and_norms(device):
    torch = pytest.importorskip("torch")
    low_rank = TALL[:, :, :1] @ TALL[:, :1, :]
    compare(gputorch.linalg.matrix_rank, torch.linalg.matrix_rank, [low_rank], device, grad=False)
    compare(lambda a: gputorch.linalg.matrix_rank(a, 0.5), lambda a: torch.linalg.matrix_rank(a, 0.5), [TALL], device,
            grad=False)
    for ord_ in ("nuc", 2, -2):
        compare(lambda a: gputorch.linalg.matrix_norm(a, ord_), lambda a: torch.linalg.matrix_norm(a, ord_), [WIDE],
                device)
        compare(lambda a: gputorch.linalg.norm(a, ord_, (0, 2), True),
                lambda a: torch.linalg.norm(a, ord_, (0, 2), True), [WIDE], device)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -math.inf])
def test_cond(p, device):
    torch = pytest.importorskip("torch")
    # PyTorch's own backward of cond for the inverse-based norms fails (an in-place write): compare values there.
    compare(lambda a: gputorch.linalg.cond(a, p), lambda a: torch.linalg.cond(a, p), [SQUARE], device,
            grad=p in (None, 2, -2, "nuc"))
    singular = np.array([[1.0, 0], [0, 0]])
    if p not in (None, 2, -2):
        compare(lambda a: gputorch.linalg.cond(a, p), lambda a: torch.linalg.cond(a, p), [singular], device, grad=False)


def test_cond_errors(device):
    with pytest.raises(RuntimeError, match="linalg.cond got an invalid norm type: x"):
        gputorch.linalg.cond(gputorch.eye(2, device=device), "x")
    with pytest.raises(RuntimeError, match=r"linalg.cond\(ord=1\): A must be batches of square matrices"):
        gputorch.linalg.cond(gputorch.ones(2, 3, device=device), 1)


@pytest.mark.parametrize("driver", [None, "gelsd", "gels"])
def test_lstsq(driver, device):
    torch = pytest.importorskip("torch")
    compare(lambda a, b: gputorch.linalg.lstsq(a, b, driver=driver),
            lambda a, b: torch.linalg.lstsq(a, b, driver=driver), [TALL, RHS], device, rtol=1e-9, atol=1e-9)
    compare(lambda a, b: gputorch.linalg.lstsq(a, b, driver=driver),
            lambda a, b: torch.linalg.lstsq(a, b, driver=driver), [WIDE, RHS[:, :3]], device, rtol=1e-9, atol=1e-9)
    compare(lambda a, b: gputorch.linalg.lstsq(a, b, driver=driver),
            lambda a, b: torch.linalg.lstsq(a, b, driver=driver), [TALL[0], RHS[0, :, 0]], device, rtol=1e-9, atol=1e-9)


def test_lstsq_errors(device):
    a = gputorch.ones(4, 2, dtype=gputorch.float64, device=device)
    with pytest.raises(RuntimeError, match="parameter `driver` should be one of"):
        gputorch.linalg.lstsq(a, a, driver="x")
    with pytest.raises(RuntimeError, match=r"input.size\(-2\) should match other.size\(-2\)"):
        gputorch.linalg.lstsq(a, a[:3])
    with pytest.raises(RuntimeError, match="Expected input and other to have the same dtype"):
        gputorch.linalg.lstsq(a.float(), a)


# ---------------------------------------------------------------- determinants, powers, exponential, _ex forms
def test_slogdet_logdet(device):
    torch = pytest.importorskip("torch")
    compare(gputorch.linalg.slogdet, torch.linalg.slogdet, [SQUARE], device)
    compare(gputorch.slogdet, torch.slogdet, [SQUARE], device)
    compare(gputorch.logdet, torch.logdet, [SPD], device)
    compare(lambda a: a.logdet(), lambda a: a.logdet(), [SQUARE], device, grad=False)    # NaN where det < 0
    compare(gputorch.linalg.slogdet, torch.linalg.slogdet, [np.zeros((2, 2))], device, grad=False)
    assert gradcheck(lambda a: gputorch.linalg.slogdet(a).logabsdet, (gt(SQUARE[:1], device),))
    with pytest.raises(RuntimeError, match="linalg.slogdet: Expected a floating point or complex tensor as input"):
        gputorch.linalg.slogdet(gputorch.ones(2, 2, dtype=gputorch.int64, device=device))


@pytest.mark.parametrize("n", [0, 1, 3, 6, -1, -3])
def test_matrix_power(n, device):
    torch = pytest.importorskip("torch")
    compare(lambda a: gputorch.linalg.matrix_power(a, n), lambda a: torch.linalg.matrix_power(a, n), [SQUARE], device,
            rtol=1e-9)
    compare(lambda a: a.matrix_power(n), lambda a: a.matrix_power(n), [SQUARE[0]], device, rtol=1e-9)


def test_matrix_power_integers_and_errors(device):
    a = gputorch.tensor([[1, 1], [1, 0]], device=device)
    assert gputorch.linalg.matrix_power(a, 10).tolist() == [[89, 55], [55, 34]]
    with pytest.raises(RuntimeError, match="linalg.inv: Expected a floating point or complex tensor as input"):
        gputorch.linalg.matrix_power(a, -1)
    with pytest.raises(RuntimeError, match="linalg.matrix_power: A must be batches of square matrices"):
        gputorch.linalg.matrix_power(gputorch.ones(2, 3, device=device), 2)


@pytest.mark.parametrize("scale", [0.01, 1.0, 8.0])
def test_matrix_exp(scale, device):
    torch = pytest.importorskip("torch")
    compare(gputorch.linalg.matrix_exp, torch.linalg.matrix_exp, [scale * SQUARE], device, rtol=1e-9, atol=1e-9)
    compare(gputorch.matrix_exp, torch.matrix_exp, [scale * SQUARE[0]], device, rtol=1e-9, atol=1e-9)
    if scale == 1.0:
        assert gradcheck(gputorch.linalg.matrix_exp, (gt(SQUARE[:1, :3, :3], device),))
        with pytest.raises(RuntimeError, match="linalg.matrix_exp: Expected a floating point or complex tensor"):
            gputorch.linalg.matrix_exp(gputorch.ones(2, 2, dtype=gputorch.int64, device=device))


def test_inv_ex_solve_ex(device):
    torch = pytest.importorskip("torch")
    compare(gputorch.linalg.inv_ex, torch.linalg.inv_ex, [SQUARE], device)
    compare(gputorch.linalg.solve_ex, torch.linalg.solve_ex, [SQUARE, RHS], device)
    singular = gputorch.tensor([[[1.0, 2], [3, 4]], [[1, 2], [2, 4]]], dtype=gputorch.float64, device=device)
    inverse, info = gputorch.linalg.inv_ex(singular)
    assert info.tolist() == [0, 2] and info.dtype is gputorch.int32
    assert_close(inverse[0], np.array([[-2.0, 1], [1.5, -0.5]]))
    result, info = gputorch.linalg.solve_ex(singular, gputorch.ones(2, 2, dtype=gputorch.float64, device=device))
    assert info.tolist() == [0, 2]
    with pytest.raises(gputorch.linalg.LinAlgError, match=r"linalg.inv_ex: \(Batch element 1\): The diagonal "
                       r"element 2 is zero"):
        gputorch.linalg.inv_ex(singular, check_errors=True)
    with pytest.raises(gputorch.linalg.LinAlgError, match=r"linalg.inv: \(Batch element 1\): The diagonal element 2"):
        gputorch.linalg.inv(singular)
    with pytest.raises(gputorch.linalg.LinAlgError, match=r"\(Batch element 1\): The solver failed because the "
                       r"input matrix is singular"):
        gputorch.linalg.solve(singular, gputorch.ones(2, 2, dtype=gputorch.float64, device=device))


def test_namespace_matches_torch():
    torch = pytest.importorskip("torch")
    missing = {n for n in dir(torch.linalg) if not n.startswith("_")} - set(dir(gputorch.linalg))
    # eig/eigvals need complex dtypes; the LDL factorization is not written yet.
    assert missing <= {"common_notes", "eig", "eigvals", "ldl_factor", "ldl_factor_ex", "ldl_solve"}
    for name in ("cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd", "pinverse", "matrix_exp", "logdet",
                 "slogdet", "det", "matrix_power"):
        assert hasattr(gputorch, name) and hasattr(gputorch.Tensor, name), name


# ---------------------------------------------------------------- LU
@pytest.mark.parametrize("shape", [SQUARE, TALL, WIDE], ids=["square", "tall", "wide"])
def test_lu(shape, device):
    torch = pytest.importorskip("torch")
    out = compare(gputorch.linalg.lu_factor_ex, torch.linalg.lu_factor_ex, [shape], device)
    assert out[1].dtype is gputorch.int32
    compare(gputorch.linalg.lu, torch.linalg.lu, [shape], device)
    assert gradcheck(lambda a: gputorch.linalg.lu_factor(a).LU, (gt(shape[:1], device),))


@pytest.mark.parametrize("left, adjoint", [(True, False), (True, True), (False, False), (False, True)])
def test_lu_solve(left, adjoint, device):
    torch = pytest.importorskip("torch")
    b = RHS if left else RHS.transpose(0, 2, 1)
    compare(lambda a, c: gputorch.linalg.lu_solve(*gputorch.linalg.lu_factor(a), c, left=left, adjoint=adjoint),
            lambda a, c: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), c, left=left, adjoint=adjoint),
            [SQUARE, b], device)


def test_lu_singular_and_errors(device):
    torch = pytest.importorskip("torch")
    singular = np.array([[[1.0, 2], [3, 4]], [[1, 2], [2, 4]], [[0, 0], [0, 0]]])
    out = compare(gputorch.linalg.lu_factor_ex, torch.linalg.lu_factor_ex, [singular], device, grad=False)
    assert out[2].tolist() == [0, 2, 1]
    with pytest.raises(gputorch.linalg.LinAlgError, match=r"\(Batch element 1\): U\[2,2\] is zero"):
        gputorch.linalg.lu_factor(gt(singular, device, False))
    with pytest.raises(NotImplementedError, match="\"lu_cpu\" not implemented for 'Long'"):
        gputorch.linalg.lu_factor(gputorch.ones(2, 2, dtype=gputorch.int64, device=device))
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented"):
        gputorch.linalg.lu(gputorch.ones(2, 2, device=device), pivot=False)
    lu_t, piv = gputorch.linalg.lu_factor(gputorch.eye(2, device=device))
    with pytest.raises(RuntimeError, match="The input tensor B must have at least 2 dimensions"):
        gputorch.linalg.lu_solve(lu_t, piv, gputorch.ones(2, device=device))


# ---------------------------------------------------------------- vander, householder_product, tensorinv/solve
def test_vander(device):
    torch = pytest.importorskip("torch")
    compare(gputorch.linalg.vander, torch.linalg.vander, [TALL[0]], device)
    compare(lambda x: gputorch.linalg.vander(x, N=5), lambda x: torch.linalg.vander(x, N=5), [TALL[0, 0]], device)
    v = gputorch.linalg.vander(gputorch.tensor([1, 2, 3], device=device))
    assert v.dtype is gputorch.int64 and v.tolist() == [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    with pytest.raises(RuntimeError, match="N must be greater than 1"):
        gputorch.linalg.vander(gputorch.tensor([1.0, 2.0], device=device), N=1)


@pytest.mark.parametrize("shape, k", [((2, 5, 3), 3), ((4, 4), 2)])
def test_householder_product(shape, k, device):
    torch = pytest.importorskip("torch")
    reflectors, tau = torch.geqrf(torch.tensor(RNG.standard_normal(shape)))
    compare(gputorch.linalg.householder_product, torch.linalg.householder_product,
            [reflectors.numpy(), tau[..., :k].numpy().copy()], device)
    with pytest.raises(RuntimeError, match=r"input.shape\[-2\] must be greater than or equal to input.shape\[-1\]"):
        gputorch.linalg.householder_product(gputorch.ones(2, 3, device=device), gputorch.ones(1, device=device))


def test_tensorinv_tensorsolve(device):
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((4, 2, 2)) + 3 * np.eye(4).reshape(4, 2, 2)
    compare(lambda x: gputorch.linalg.tensorinv(x, ind=1), lambda x: torch.linalg.tensorinv(x, ind=1), [a], device)
    s = RNG.standard_normal((6, 2, 3)) + 3 * np.eye(6).reshape(6, 2, 3)
    b = RNG.standard_normal((2, 3))
    compare(lambda x, y: gputorch.linalg.tensorsolve(x, y, dims=(0,)),
            lambda x, y: torch.linalg.tensorsolve(x, y, dims=(0,)), [s, b], device)
    with pytest.raises(RuntimeError, match="Expected a strictly positive integer for 'ind', but got 0"):
        gputorch.linalg.tensorinv(gputorch.tensor(a, device=device), ind=0)


# ---------------------------------------------------------------- second derivatives
def _svd_vectors_fixed(a):
    u, s, vh = gputorch.linalg.svd(a, False)
    sign = u[..., :1, :].sign()
    return u * sign, s, vh * sign.mT


SECOND_ORDER = {
    "cholesky": (lambda a: gputorch.linalg.cholesky(symmetric(a)), [SPD[:1, :3, :3]]),
    "cholesky_solve": (lambda b, f: gputorch.cholesky_solve(b, f.tril()), [RHS[:1, :3], LOWER[:1, :3, :3]]),
    "qr": (lambda a: tuple(gputorch.linalg.qr(a)), [WIDE[:1, :2]]),
    "eigh": (lambda a: (lambda w, v: (w, _fix_columns(v)))(*gputorch.linalg.eigh(symmetric(a))), [SYM[:1, :3, :3]]),
    "svd": (_svd_vectors_fixed, [TALL[:1, :3, :2]]),
    "lu_factor": (lambda a: gputorch.linalg.lu_factor(a).LU, [TALL[:1, :3, :2]]),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_gradgradcheck(name, device):
    from gputorch.autograd import gradgradcheck
    fn, arrays = SECOND_ORDER[name]
    inputs = tuple(gt(a, device) for a in arrays)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_matrix_exp_scales_each_matrix_of_a_batch_by_its_own_norm(device):
    """A huge matrix beside small ones: a batch-wide scale would square the small ones ~128 times in
    float32 and destroy them (found by the differential suite, seed 11)."""
    from scipy.linalg import expm
    small = np.array([[[-1.14, 1.29], [0.73, -0.43]], [[0.32, -0.32], [1.16, 0.83]]])
    batch = np.concatenate([small, [[[-3e38, -2.27], [-0.92, -0.31]]]]).astype(np.float32)
    got = gputorch.matrix_exp(gputorch.tensor(batch, device=device)).cpu().numpy()
    for i in range(2):
        np.testing.assert_allclose(got[i], expm(small[i]), rtol=1e-5, atol=1e-6)
    x = gputorch.tensor(np.concatenate([small, small * 40]), dtype=gputorch.float64, device=device,
                        requires_grad=True)
    assert gputorch.autograd.gradcheck(gputorch.matrix_exp, (x,))


def test_logdet_gradients_at_negative_and_zero_determinants(device):
    # logdet is NaN where det < 0, with no gradient there (PyTorch's composite: a NaN constant); at a
    # singular matrix log|det| is -inf and the gradient A^-T is solved through LU without refusing it:
    # inf/NaN where the zero pivot is met, as PyTorch's (gputorch raised LinAlgError or gave A^-T).
    a = gputorch.tensor([[[1.0, 2.0], [3.0, 4.0]], [[0.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 3.0]]],
                        dtype=gputorch.float64, device=device, requires_grad=True)
    out = a.logdet()
    r = out.detach().cpu().numpy()
    assert np.isnan(r[0]) and r[1] == -np.inf and abs(r[2] - np.log(6.0)) < 1e-15
    out.sum().backward()
    g = a.grad.cpu().numpy()
    np.testing.assert_array_equal(g[0], np.zeros((2, 2)))
    np.testing.assert_array_equal(g[1], [[np.inf, np.nan], [0.0, 1.0]])
    np.testing.assert_allclose(g[2], [[0.5, 0.0], [0.0, 1 / 3]], rtol=1e-15)
    # slogdet's log|det| keeps the gradient A^-T at a negative determinant; singular: inf/NaN, no error
    b = gputorch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    gputorch.linalg.slogdet(b)[1].backward()
    np.testing.assert_allclose(b.grad.cpu().numpy(), [[-2.0, 1.5], [1.0, -0.5]], rtol=1e-6)
    c = gputorch.tensor([[7.83, 7.83], [7.83, 7.83]], device=device, requires_grad=True)
    gputorch.linalg.slogdet(c)[1].backward()
    np.testing.assert_array_equal(c.grad.cpu().numpy(), [[np.inf, -np.inf], [-np.inf, np.inf]])


def test_det_of_half_precision_computes_only_what_has_nothing_to_factor(device):
    # PyTorch's det skips its dtype check when there is nothing to factor (0x0 matrices have det 1, an
    # empty batch gives an empty result) and refuses half precision otherwise with NotImplementedError
    # (its LU kernel has none); gputorch refused both with RuntimeError.
    a = gputorch.zeros((2, 1, 0, 0), dtype=gputorch.float16, device=device, requires_grad=True)
    out = a.det()
    assert out.dtype == gputorch.float16 and tuple(out.shape) == (2, 1) and out.requires_grad
    np.testing.assert_array_equal(out.detach().cpu().numpy(), [[1.0], [1.0]])
    out.sum().backward()
    assert a.grad.dtype == gputorch.float16 and tuple(a.grad.shape) == (2, 1, 0, 0)
    assert tuple(gputorch.linalg.det(gputorch.zeros((0, 3, 3), dtype=gputorch.float16, device=device)).shape) == (0,)
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        gputorch.linalg.det(gputorch.ones((2, 2), dtype=gputorch.float16, device=device))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        gputorch.linalg.det(gputorch.zeros((2, 0, 0), dtype=gputorch.int64, device=device))
