"""``gputorch.nn.functional``: the stateless forms of the nn layers, one module per family."""
from .activation import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .vision import *  # noqa: F401,F403
from .recurrent import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .pixel_shuffle import *  # noqa: F401,F403
from .grid_sampling import *  # noqa: F401,F403
from .gumbel import *  # noqa: F401,F403
from .fractional_pooling import *  # noqa: F401,F403
# defined beside its module (the brief's file split); it uses Tensor ops only, no nn.functional
from ..modules.local_response_norm import local_response_norm  # noqa: F401,E402
