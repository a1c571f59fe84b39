"""The memory categories and their precedence.

Every storage the profiler tracks is in exactly one category at any time. When a storage has
several roles (a parameter that an op saves for backward, a gradient that is also an output),
the role listed first below wins:

``parameters``       module parameters (and tensors an optimizer optimizes)
``buffers``          module buffers (running statistics, ...)
``gradients``        ``.grad`` of parameters
``optimizer_state``  tensors in ``optimizer.state`` (moments, step counters, ...)
``communication``    buffers of distributed training: DistributedDataParallel's gradient buckets
                     (with ``gradient_as_bucket_view`` the ``.grad`` views share them and they
                     count as gradients)
``activations``      tensors held by the autograd graph for backward, until backward frees them
``temporaries``      tensors freed within the operation that made them (inside one module call,
                     one backward pass, one optimizer step)
``other``            anything else alive: inputs, outputs, losses, user tensors

Classification changes over time: an activation becomes ``other`` when backward frees the
graph but the storage lives on; a tensor made inside an optimizer step becomes optimizer state
if the optimizer keeps it in its state.
"""

__all__ = ["CATEGORIES", "PARAMETERS", "BUFFERS", "GRADIENTS", "OPTIMIZER_STATE", "COMMUNICATION", "ACTIVATIONS",
           "TEMPORARIES", "OTHER", "RANK", "stronger"]

PARAMETERS = "parameters"
BUFFERS = "buffers"
GRADIENTS = "gradients"
OPTIMIZER_STATE = "optimizer_state"
COMMUNICATION = "communication"
ACTIVATIONS = "activations"
TEMPORARIES = "temporaries"
OTHER = "other"

CATEGORIES = (PARAMETERS, BUFFERS, GRADIENTS, OPTIMIZER_STATE, COMMUNICATION, ACTIVATIONS, TEMPORARIES, OTHER)

RANK = {c: i for i, c in enumerate(CATEGORIES)}   # lower rank wins


def stronger(a, b):
    """Whether category ``a`` takes precedence over category ``b``."""
    return RANK[a] < RANK[b]
