"""Models, batches and independent byte counts shared by the memory profiler tests."""
import numpy as np

import gputorch
import gputorch.nn as nn
from gputorch.autograd.node import SavedTensor
from gputorch.profiler.tracker import owner_of


def mlp(device, sizes=(32, 64, 48, 10), seed=0):
    """Linear/ReLU MLP; modules "0", "1", ... as in nn.Sequential."""
    gputorch.manual_seed(seed)
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(n_in, n_out), nn.ReLU()]
    return nn.Sequential(*layers[:-1]).to(device)


def batch(device, n=16, features=32, classes=10, seed=0):
    rng = np.random.default_rng(seed)
    x = gputorch.tensor(rng.standard_normal((n, features)).astype(np.float32), device=device)
    y = gputorch.tensor(rng.integers(0, classes, n), device=device)
    return x, y


def param_bytes(model):
    return sum(p.numel() * p.element_size() for p in model.parameters())


def storage_bytes(t):
    """Bytes of the array that owns ``t``'s memory (random numbers on a GPU may come from a
    slightly longer buffer)."""
    owner = owner_of(t._data)
    return owner.size * owner.dtype.itemsize


def storage_key(t):
    return id(owner_of(t._data))


def graph_saved_bytes(root, exclude=()):
    """Bytes of the distinct storages the graph behind ``root`` (a grad_fn) holds for backward,
    found by walking the graph's nodes and their saved tensors; ``exclude``: storage keys to skip."""
    seen, stack, storages = set(), [root], {}
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        saved = list(node._saved or ()) + [node._result_saved]
        for s in saved:
            if isinstance(s, SavedTensor):
                t = s.tensor if s.tensor is not None else s.packed
                if isinstance(t, gputorch.Tensor):
                    owner = owner_of(t._data)
                    storages[id(owner)] = owner
        stack += [fn for fn, _ in node.next_functions]
    return sum(o.size * o.dtype.itemsize for k, o in storages.items() if k not in exclude)


def torch_adam_state_bytes(sizes):
    """Bytes of PyTorch's Adam state for an MLP of ``sizes`` after one step."""
    torch = __import__("torch")
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        layers += [torch.nn.Linear(n_in, n_out), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    opt = torch.optim.Adam(model.parameters())
    model(torch.randn(2, sizes[0])).sum().backward()
    opt.step()
    return sum(v.numel() * v.element_size() for st in opt.state.values() for v in st.values()
               if torch.is_tensor(v))
