"""Elementwise math, one family per module:

- ``exp_log``: exponentials, logarithms and roots (exp, log, sqrt, rsqrt, ...)
- ``trig``: trigonometric and hyperbolic functions (sin, asin, tanh, ...)
- ``activations``: sigmoid and relu
- ``error_functions``: erf, erfc, erfinv
- ``rounding``: sign, floor, ceil, trunc, round, frac
- ``clamping``: clamp/clip, clamp_min, clamp_max, nan_to_num
- ``interpolation``: lerp
- ``binary``: maximum, minimum, fmax, fmin, atan2, hypot, logaddexp, logaddexp2, xlogy
- ``number_parts``: gcd, lcm, copysign, heaviside, nextafter, ldexp, frexp
- ``_common``: the helpers they share

Integer and bool inputs to floating functions give the default float dtype, as in
PyTorch. Each backward is written with Tensor ops, next to its forward, so that it
can itself be differentiated. Ops whose derivative is cheapest in terms of their
output (exp, sqrt, tanh, sigmoid, relu, ...) save the output (``saves_result``).

Importing this package defines every function here and registers its Tensor methods.
"""
from . import (activations, binary, clamping, error_functions, exp_log, interpolation, number_parts, rounding,
               trig)
from .activations import *  # noqa: F401,F403
from .binary import *  # noqa: F401,F403
from .clamping import *  # noqa: F401,F403
from .error_functions import *  # noqa: F401,F403
from .exp_log import *  # noqa: F401,F403
from .interpolation import *  # noqa: F401,F403
from .number_parts import *  # noqa: F401,F403
from .rounding import *  # noqa: F401,F403
from .trig import *  # noqa: F401,F403
# in-place functions that are Tensor methods but not in torch's namespace (so not in __all__)
from .binary import atan2_, hypot_  # noqa: F401
from .error_functions import erfinv_  # noqa: F401
from .interpolation import lerp_  # noqa: F401
from .rounding import sgn_, sign_  # noqa: F401
# the graph nodes, for code that names them
from .activations import ReluBackward0, SigmoidBackward0  # noqa: F401
from .binary import (Atan2Backward0, FmaxBackward0, FminBackward0, HypotBackward0,  # noqa: F401
                     Logaddexp2Backward0, LogaddexpBackward0, MaximumBackward0, MinimumBackward0,
                     XlogyBackward0, XlogyBackward1, XlogyBackward2)
from .clamping import (ClampBackward0, ClampBackward1, ClampMaxBackward0, ClampMaxBackward1,  # noqa: F401
                       ClampMinBackward0, ClampMinBackward1, NanToNumBackward0)
from .error_functions import ErfBackward0, ErfcBackward0, ErfinvBackward0  # noqa: F401
from .exp_log import (Exp2Backward0, ExpBackward0, Expm1Backward0, Log10Backward0,  # noqa: F401
                      Log1PBackward0, Log2Backward0, LogBackward0, RsqrtBackward0, SqrtBackward0)
from .interpolation import LerpBackward0, LerpBackward1  # noqa: F401
from .rounding import (CeilBackward0, FloorBackward0, FracBackward0, RoundBackward0,  # noqa: F401
                       RoundBackward1, SgnBackward0, SignBackward0, TruncBackward0)
from .trig import (AcosBackward0, AsinBackward0, AtanBackward0, CosBackward0,  # noqa: F401
                   CoshBackward0, SinBackward0, SinhBackward0, TanBackward0, TanhBackward0)

__all__ = [*exp_log.__all__, *trig.__all__, *activations.__all__, *error_functions.__all__,
           *rounding.__all__, *clamping.__all__, *interpolation.__all__, *binary.__all__, *number_parts.__all__]
