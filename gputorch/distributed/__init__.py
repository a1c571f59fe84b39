"""``gputorch.distributed``: not available yet. As in a PyTorch build without distributed support,
``is_available()`` is False and ``is_initialized()`` False; every other function raises a
RuntimeError that says so. (Programs import these names at the top and use them only when they run
under a launcher.)"""

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "barrier", "all_reduce", "broadcast", "all_gather", "reduce", "ReduceOp"]


def is_available():
    """False: gputorch has no process groups yet."""
    return False


def is_initialized():
    """False: no process group can be initialised."""
    return False


def _unavailable(name):
    def fn(*args, **kwargs):
        raise RuntimeError(f"gputorch.distributed.{name}: distributed training is not available in gputorch "
                           "yet (gputorch.distributed.is_available() is False)")
    fn.__name__ = name
    fn.__doc__ = "Not available yet: raises RuntimeError."
    return fn


init_process_group = _unavailable("init_process_group")
destroy_process_group = _unavailable("destroy_process_group")
get_rank = _unavailable("get_rank")
get_world_size = _unavailable("get_world_size")
barrier = _unavailable("barrier")
all_reduce = _unavailable("all_reduce")
broadcast = _unavailable("broadcast")
all_gather = _unavailable("all_gather")
reduce = _unavailable("reduce")


class ReduceOp:
    """The reduction names of collectives (the operations themselves are not available yet)."""
    SUM, PRODUCT, MIN, MAX, AVG = "sum", "product", "min", "max", "avg"
