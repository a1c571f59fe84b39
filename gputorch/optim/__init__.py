"""``gputorch.optim``: optimizers (PyTorch's update rules, in PyTorch's order of operations) and
learning-rate schedulers (``gputorch.optim.lr_scheduler``)."""
from . import lr_scheduler  # noqa: F401
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer, register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "lr_scheduler",
           "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]
