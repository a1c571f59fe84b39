"""gputorch: a PyTorch-compatible deep learning framework on NumPy (CPU) and CuPy (CUDA)."""
__version__ = "0.1.0"

from ._dtype import (bool, can_cast, cdouble, cfloat, complex64, complex128, double, dtype,  # noqa: A004
                     bfloat16, float, float16, float32, float64,
                     get_default_dtype, half, int, int8, int16, int32, int64, long, promote_types,
                     result_type, set_default_dtype, short, uint8)
from ._device import device
from ._device_context import get_default_device, set_default_device
from ._size import Size
from ._layouts import *  # noqa: F401,F403
from ._tensor import Tensor
from . import ops as _ops  # attaches Tensor methods
from .ops.arithmetic import *  # noqa: F401,F403
from .ops.comparison import *  # noqa: F401,F403
from .ops.creation import *  # noqa: F401,F403
from .ops.gamma_functions import *  # noqa: F401,F403
from .ops.indexing import *  # noqa: F401,F403
from .ops.linalg import *  # noqa: F401,F403
from .ops.pointwise import *  # noqa: F401,F403
from .ops.reduction import *  # noqa: F401,F403
from .ops.sampling import *  # noqa: F401,F403
from .ops.shape import *  # noqa: F401,F403
from .ops.special_functions import *  # noqa: F401,F403
from .ops.tensor_queries import *  # noqa: F401,F403
from .ops.set_ops import *  # noqa: F401,F403
from .ops.bucketing import *  # noqa: F401,F403
from .ops.quantiles import *  # noqa: F401,F403
from .ops.norm_functions import *  # noqa: F401,F403
from .ops.covariance import *  # noqa: F401,F403
from .ops.calculus import *  # noqa: F401,F403
from .ops.polynomials import *  # noqa: F401,F403
from .ops.lowrank import *  # noqa: F401,F403
from .ops.binomial_sampling import *  # noqa: F401,F403
from .ops.lobpcg import lobpcg  # noqa: F401
from ._type_info import *  # noqa: F401,F403
from ._threads import *  # noqa: F401,F403
from ._legacy_tensor_types import *  # noqa: F401,F403
from .ops.ternary import *  # noqa: F401,F403
from .ops.complex_numbers import *  # noqa: F401,F403
from .ops.spectral_windows import *  # noqa: F401,F403
from .ops.short_time_fourier import *  # noqa: F401,F403
from .ops.sparse_coo import *  # noqa: F401,F403
from .random import *  # noqa: F401,F403
from ._tensor_str import get_printoptions, printoptions, set_printoptions  # noqa: F401
from .utils.dlpack import from_dlpack, to_dlpack  # noqa: F401
from . import autograd, cuda
from . import linalg  # noqa: E402 - the torch.linalg namespace
from . import fft  # noqa: E402,F811 - the torch.fft namespace
from . import sparse  # noqa: E402 - the torch.sparse namespace
from . import jit  # noqa: E402 - tracing and traced modules
from . import onnx  # noqa: E402 - export (needs the onnx extra only when called)
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.grad_mode import is_inference_mode_enabled
from ._debug_flags import *  # noqa: F401,F403 - deterministic algorithms, anomaly mode, warn-always
from ._control_flow import cond  # noqa: F401
from . import nn  # noqa: E402
from .nn.functional import log_softmax, softmax  # noqa: E402,F401 - torch.softmax and torch.log_softmax
from .nn.functional.distance import cdist, cosine_similarity, pairwise_distance, pdist  # noqa: E402,F401
from .nn.functional.pixel_shuffle import (channel_shuffle, native_channel_shuffle, pixel_shuffle,  # noqa: E402,F401
                                          pixel_unshuffle)
from ._functional_aliases import *  # noqa: E402,F401,F403 - torch.conv2d, torch.dropout, torch.kl_div...
from . import optim  # noqa: E402
from .serialization import load, save  # noqa: E402
from .utils import checkpoint as _utils_checkpoint, data as _utils_data  # noqa: E402,F401 - gputorch.utils.data/.checkpoint
from . import distributed, distributions, multiprocessing, special, testing, accelerator  # noqa: E402,F401
from . import signal  # noqa: E402 - the torch.signal namespace
from .signal import windows  # noqa: E402,F401 - torch.windows is torch.signal.windows too
from ._compile import compile  # noqa: E402,F401,A004
from ._matmul_precision import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402,F401
from . import amp  # noqa: E402
from ._streams import Event, Stream  # noqa: E402,F401
from .amp import autocast, get_autocast_dtype, is_autocast_enabled  # noqa: E402,F401
