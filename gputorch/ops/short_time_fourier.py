"""The short-time Fourier transform and its inverse: ``stft`` and ``istft``, composed of
differentiable ops (framing by ``unfold``, windowing, ``fft.rfft``/``fft.fft``; the inverse by
``fft.irfft``/``fft.ifft`` and overlap-add with ``index_add``), so both have gradients.

Shapes: ``stft`` takes a signal ``(L,)`` or ``(B, L)`` and returns ``(B?, n_freq, n_frames)``
complex values, ``n_freq = n_fft // 2 + 1`` when one-sided, ``n_frames = 1 + (L' - n_fft) //
hop_length`` where ``L'`` is ``L + 2 * (n_fft // 2)`` when ``center`` (the signal padded at both ends
with ``pad_mode``) and ``L`` otherwise. The window (``win_length`` samples, ones by default) is
zero-padded on both sides to ``n_fft``.
"""
import warnings

from .. import _dtype
from ._common import require_tensor
from . import fourier
from .registry import tensor_method

__all__ = ["stft", "istft"]


def _window(window, n_fft, win_length, like):
    """The window as ``n_fft`` samples: ``window`` (or ones) of ``win_length`` centred in zeros."""
    if win_length is None:
        win_length = n_fft if window is None else window.shape[0]
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"stft expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is None:
        window = like.new_ones(win_length, dtype=like.dtype.to_real())
    elif window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"stft expected a 1D window tensor of size equal to win_length={win_length}, but "
                           f"got window with size {list(window.shape)}")
    left = (n_fft - win_length) // 2
    if left or win_length < n_fft:
        from .shape import cat
        window = cat([window.new_zeros(left), window, window.new_zeros(n_fft - win_length - left)])
    return window


def _check_sizes(name, n_fft, hop_length, length):
    if hop_length is None:
        hop_length = n_fft // 4
    if hop_length <= 0:
        raise RuntimeError(f"{name} expected hop_length > 0, but got hop_length={hop_length}")
    if length is not None and not 0 < n_fft <= length:
        raise RuntimeError(f"{name} expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    return hop_length


def _pad_signal(x, pad, mode):
    """``x`` (B, L) padded by ``pad`` samples at both ends of the last dim: "reflect" (mirrored
    about the end samples), "replicate", "circular" or "constant" (zeros)."""
    size = x.shape[-1]
    if mode == "constant":
        from .shape import cat
        zeros = x.new_zeros(x.shape[:-1] + (pad,))
        return cat([zeros, x, zeros], -1)
    if mode == "reflect" and pad >= size:
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                           f"but got: padding ({pad}, {pad}) at dimension 1 of input {list(x.shape)}")
    picks = {"reflect": lambda i: -i if i < 0 else (2 * (size - 1) - i if i >= size else i),
             "replicate": lambda i: min(max(i, 0), size - 1),
             "circular": lambda i: i % size}
    if mode not in picks:
        raise NotImplementedError(f"stft: pad_mode {mode!r} is not one of 'constant', 'reflect', 'replicate', "
                                  f"'circular'")
    from .creation import tensor
    index = tensor([picks[mode](i) for i in range(-pad, size + pad)], device=x.device)
    return x.index_select(-1, index)


@tensor_method("stft")
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None):
    """The short-time Fourier transform (see the module docstring for the shapes)."""
    require_tensor("stft", input)
    if return_complex is None:
        if not input.dtype.is_complex and (window is None or not window.dtype.is_complex):
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    if x.dtype._category < 2:
        x = x.to(_dtype.get_default_dtype())
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied, which is known to cause "
                      "spectral leakage.", UserWarning, stacklevel=2)
    hop_length = _check_sizes("stft", n_fft, hop_length, None)
    if center:
        x = _pad_signal(x, n_fft // 2, pad_mode)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    frames = x.unfold(-1, n_fft, hop_length)                  # (B, n_frames, n_fft)
    frames = frames * _window(window, n_fft, win_length, x)
    complex_input = frames.dtype.is_complex
    if onesided is None:
        onesided = not complex_input
    if onesided and complex_input:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spectrum = fourier.rfft(frames, dim=-1, norm=norm) if onesided else fourier.fft(frames, dim=-1, norm=norm)
    out = spectrum.transpose(-1, -2)                          # (B, n_freq, n_frames)
    if input.dim() == 1:
        out = out.squeeze(0)
    if not return_complex:
        from .complex_numbers import view_as_real
        return view_as_real(out)
    return out


@tensor_method("istft")
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of :func:`stft` by windowed overlap-add, divided by the summed squared window."""
    require_tensor("istft", input)
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor.")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex, but got {input.dim()}")
    spec = input if input.dim() == 3 else input.unsqueeze(0)     # (B, n_freq, n_frames)
    hop_length = _check_sizes("istft", n_fft, hop_length, None)
    n_freq, n_frames = spec.shape[-2], spec.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided and n_freq != n_fft // 2 + 1:
        raise RuntimeError(f"istft expected the frequency dimension (3rd to the last) of the input tensor to "
                           f"match n_fft / 2 + 1 when onesided=True, but got {n_freq}")
    if not onesided and n_freq != n_fft:
        raise RuntimeError(f"istft expected the frequency dimension (3rd to the last) of the input tensor to "
                           f"match n_fft when onesided=False, but got {n_freq}")
    if onesided and return_complex:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    frames = spec.transpose(-1, -2)                             # (B, n_frames, n_freq)
    if return_complex:
        frames = fourier.ifft(frames, dim=-1, norm=norm)
    else:   # a real signal: only the one-sided half of a full spectrum is read, as PyTorch does
        frames = fourier.irfft(frames.narrow(-1, 0, n_fft // 2 + 1), n=n_fft, dim=-1, norm=norm)
    win = _window(window, n_fft, win_length, frames)
    frames = frames * win
    total = n_fft + hop_length * (n_frames - 1)
    from .creation import arange
    positions = (arange(n_frames, device=spec.device).unsqueeze(1) * hop_length
                 + arange(n_fft, device=spec.device)).reshape(-1)
    batch = frames.shape[0]
    signal = frames.new_zeros((batch, total)).index_add(1, positions, frames.reshape(batch, -1))
    envelope = win.new_zeros(total).index_add(0, positions, (win * win).repeat(n_frames))
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if center else total
    if length is not None:
        end = start + length
    signal, envelope = signal[:, start:end], envelope[start:end]
    if not envelope.numel():
        raise RuntimeError(f"istft: no samples are left once the centre padding ({n_fft // 2} at each end) is "
                           f"removed from {total} samples")
    if bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError("istft: window overlap add min: the squared window sums to zero somewhere "
                           "(choose a window and hop_length that overlap everywhere)")
    signal = signal / envelope
    if length is not None and signal.shape[-1] < length:
        from .shape import cat
        signal = cat([signal, signal.new_zeros((batch, length - signal.shape[-1]))], -1)
    return signal if input.dim() == 3 else signal.squeeze(0)
