"""``gputorch.optim``: optimizers (PyTorch's update rules, in PyTorch's order of operations) and
learning-rate schedulers (``gputorch.optim.lr_scheduler``)."""
from . import lr_scheduler  # noqa: F401
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer, register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "ASGD", "Rprop", "SparseAdam", "LBFGS", "Adafactor",
           "lr_scheduler",
           "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]
