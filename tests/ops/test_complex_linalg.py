"""Complex matrices in svd/svdvals, qr, eigh/eigvalsh, pinv, the spectral matrix norms and the
conjugate transposes (``mH``, ``H``, ``adjoint``): values against NumPy, gradients by gradcheck
through losses that do not depend on the vectors' phases (PyTorch refuses those that do, and so
does gputorch), and against torch where it is installed."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck
from tests._helpers import assert_close

RNG = np.random.default_rng(7)
SQUARE = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
TALL = RNG.standard_normal((4, 3)) + 1j * RNG.standard_normal((4, 3))
WIDE = RNG.standard_normal((2, 3, 4)) + 1j * RNG.standard_normal((2, 3, 4))


def _reconstruct_svd(T, x):
    u, s, vh = T.linalg.svd(x, full_matrices=False)
    return (u * s.unsqueeze(-2).to(u.dtype)) @ vh


def _reconstruct_eigh(T, x):
    w, v = T.linalg.eigh(x + x.mH)
    return (v * w.unsqueeze(-2).to(v.dtype)) @ v.mH


# Losses that do not depend on the phases of singular or eigen vectors (a name and a function of
# a library and a matrix).
INVARIANT = {
    "svdvals": lambda T, x: T.linalg.svdvals(x),
    "svd_product": _reconstruct_svd,
    "svd_moduli": lambda T, x: T.linalg.svd(x, full_matrices=False)[0].abs(),
    "qr_q": lambda T, x: T.linalg.qr(x)[0],
    "qr_r": lambda T, x: T.linalg.qr(x)[1],
    "eigvalsh": lambda T, x: T.linalg.eigvalsh(x + x.mH),
    "eigh_product": _reconstruct_eigh,
    "eigh_moduli": lambda T, x: T.linalg.eigh(x + x.mH)[1].abs(),
    "pinv": lambda T, x: T.linalg.pinv(x),
    "pinv_hermitian": lambda T, x: T.linalg.pinv(x + x.mH, hermitian=True),
    "nuclear_norm": lambda T, x: T.linalg.matrix_norm(x, "nuc"),
    "spectral_norm": lambda T, x: T.linalg.matrix_norm(x, 2),
}
SQUARE_ONLY = {"eigvalsh", "eigh_product", "eigh_moduli", "pinv_hermitian"}


def _matrices(name):
    return [SQUARE] if name in SQUARE_ONLY else [SQUARE, TALL, WIDE]


@pytest.mark.parametrize("name", sorted(INVARIANT))
def test_gradients_of_phase_free_losses(name, device):
    for m in _matrices(name):
        x = gputorch.tensor(m, device=device, requires_grad=True)
        assert gradcheck(lambda t: INVARIANT[name](gputorch, t), (x,))


@pytest.mark.parametrize("name", sorted(INVARIANT))
def test_values_and_gradients_match_torch(name):
    torch = pytest.importorskip("torch")
    for m in _matrices(name):
        ours, theirs = gputorch.tensor(m, requires_grad=True), torch.tensor(m, requires_grad=True)
        results = []
        for lib, x in ((gputorch, ours), (torch, theirs)):
            out = INVARIANT[name](lib, x)
            results.append(out.detach())
            loss = (out.real * 0.3 + out.imag * 1.7).sum() if out.is_complex() else (out * 0.3).sum()
            loss.backward()
        assert_close(results[0], results[1].numpy(), rtol=1e-10, atol=1e-10)
        assert_close(ours.grad, theirs.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_values_against_numpy(device):
    x = gputorch.tensor(TALL, device=device)
    u, s, vh = gputorch.linalg.svd(x, full_matrices=False)
    assert s.dtype == gputorch.float64
    assert_close(s, np.linalg.svd(TALL, compute_uv=False))
    assert_close(u @ (s.to(u.dtype).unsqueeze(-1) * vh), TALL, atol=1e-12)
    q, r = gputorch.linalg.qr(x)
    assert_close(q.mH @ q, np.eye(3, dtype=complex), atol=1e-12)
    assert_close(q @ r, TALL, atol=1e-12)
    hermitian = SQUARE + SQUARE.conj().T
    w, v = gputorch.linalg.eigh(gputorch.tensor(hermitian, device=device))
    assert w.dtype == gputorch.float64
    assert_close(w, np.linalg.eigvalsh(hermitian))
    assert_close(gputorch.linalg.pinv(x), np.linalg.pinv(TALL), atol=1e-12)
    assert_close(gputorch.linalg.matrix_norm(x, "nuc"), np.linalg.norm(TALL, "nuc"))


def test_losses_that_depend_on_the_phases_are_refused():
    x = gputorch.tensor(SQUARE, requires_grad=True)
    u = gputorch.linalg.svd(x)[0]
    with pytest.raises(RuntimeError, match="specified up to multiplication by e\\^\\{i phi\\}"):
        u.real.sum().backward()
    v = gputorch.linalg.eigh(x)[1]
    with pytest.raises(RuntimeError, match="linalg_eigh_backward: The eigenvectors"):
        (v.real + v.imag).sum().backward()


def test_conjugate_transposes_conjugate(device):
    z = gputorch.tensor(WIDE, device=device, requires_grad=True)
    assert_close(z.mH, WIDE.conj().swapaxes(-1, -2))
    assert_close(z[0].H, WIDE[0].conj().T)
    assert_close(z.adjoint(), WIDE.conj().swapaxes(-1, -2))
    z.mH.imag.sum().backward()
    assert_close(z.grad, np.full(WIDE.shape, -1j))
    real = gputorch.ones(2, 3)
    assert real.mH._base is real                              # real: still a view


def test_rank_and_spectral_norms_of_empty_and_complex_matrices():
    z = gputorch.tensor(SQUARE)
    singular = gputorch.tensor(np.stack([SQUARE[0], SQUARE[0] * (2 - 1j), SQUARE[2]]))
    assert gputorch.linalg.matrix_rank(z).item() == 3 and gputorch.linalg.matrix_rank(singular).item() == 2
    empty = gputorch.zeros(2, 0, 3, dtype=gputorch.complex64, requires_grad=True)
    assert gputorch.linalg.matrix_norm(empty, "nuc").requires_grad
    two = gputorch.linalg.matrix_norm(empty, 2)
    assert two.tolist() == [0.0, 0.0] and not two.requires_grad
    with pytest.raises(IndexError, match="non-zero size"):
        gputorch.linalg.matrix_norm(empty, -2)


@pytest.mark.parametrize("name", ["svdvals", "qr_r", "eigvalsh", "pinv"])
def test_second_derivatives(name):
    from gputorch.autograd import gradgradcheck
    x = gputorch.tensor(SQUARE, requires_grad=True)
    assert gradgradcheck(lambda t: INVARIANT[name](gputorch, t), (x,))


def test_eigh_backward_phase_check_has_pytorchs_tolerance(device):
    # PyTorch's eigh backward accepts a phase term (imaginary diagonal of V^H gV) up to 0.01 in absolute
    # value, in either precision, and refuses beyond; gputorch refused 0.01 (differential seed 3).
    for dtype in (gputorch.complex64, gputorch.complex128):
        for phase, accepted in ((0.01, True), (0.0099, True), (0.0101, False), (0.5, False)):
            a = gputorch.tensor([[complex(2.01, 0.52)]], dtype=dtype, device=device, requires_grad=True)
            _, v = gputorch.linalg.eigh(a)
            weights = gputorch.tensor([[[-1.22, phase]]], dtype=v.real.dtype, device=device)
            loss = (gputorch.view_as_real(v) * weights).sum()
            if accepted:
                loss.backward()
                assert_close(a.grad, np.zeros((1, 1), np.complex64 if dtype is gputorch.complex64
                                              else np.complex128))
            else:
                with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
                    loss.backward()
