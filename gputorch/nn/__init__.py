"""``gputorch.nn``: modules, parameters, functional ops and initialisation."""
from .parameter import *  # noqa: F401,F403
from .modules import *  # noqa: F401,F403
from . import functional, init, parallel, utils  # noqa: F401
from .parallel import DataParallel  # noqa: F401
