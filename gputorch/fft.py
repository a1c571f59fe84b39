"""``gputorch.fft``: PyTorch's discrete Fourier transforms (see ``ops/fourier.py``)."""
from .ops.fourier import (fft, fft2, fftfreq, fftn, fftshift, hfft, hfft2, hfftn, ifft, ifft2, ifftn,  # noqa: F401
                          ifftshift, ihfft, ihfft2, ihfftn, irfft, irfft2, irfftn, rfft, rfft2, rfftfreq, rfftn)
from .ops.fourier import __all__  # noqa: F401
