"""Small test modules written once against the PyTorch API, built for gputorch or torch.

``model_classes(lib)`` returns the classes for ``lib`` (the ``gputorch`` or ``torch`` module), so
the same source defines both models of a parity test (``import gputorch as torch`` style).
"""
from collections import OrderedDict

import numpy as np


def model_classes(lib):
    nn = lib.nn

    class Affine(nn.Module):
        """A Linear-like layer: ``x @ weight.T + bias``."""

        def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
            super().__init__()
            self.in_features = in_features
            self.out_features = out_features
            self.weight = nn.Parameter(lib.randn(out_features, in_features, device=device, dtype=dtype))
            if bias:
                self.bias = nn.Parameter(lib.randn(out_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)

        def forward(self, x):
            y = x @ self.weight.t()
            return y + self.bias if self.bias is not None else y

        def extra_repr(self):
            return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"

    class Block(nn.Module):
        def __init__(self, device=None):
            super().__init__()
            self.fc = Affine(4, 4, device=device)
            self.register_buffer("running", lib.zeros(4, device=device))
            self.register_buffer("steps", lib.zeros((), dtype=lib.int64, device=device))
            self.register_buffer("scratch", lib.ones(2, device=device), persistent=False)

        def forward(self, x):
            return (self.fc(x) * 0.5).tanh() + x

    class Net(nn.Module):
        def __init__(self, device=None):
            super().__init__()
            self.scale = nn.Parameter(lib.ones(1, device=device))
            self.blocks = nn.ModuleList([Block(device), Block(device)])
            self.head = nn.Sequential(OrderedDict(proj=Affine(4, 3, device=device), flat=nn.Flatten(0)))
            self.shared = self.blocks[0].fc  # the same module under a second name
            self.table = nn.ParameterDict({"b": lib.zeros(3, device=device), "a": lib.ones(2, device=device)})
            self.plist = nn.ParameterList([lib.zeros(2, device=device), lib.ones(3, device=device)])
            self.nobias = Affine(4, 4, bias=False, device=device)
            self.cache = lib.zeros(1, device=device)  # a plain tensor attribute: not registered

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            x = self.shared(x) * self.scale + self.nobias(x)
            return self.head(x) + self.table["b"].sum() + self.plist[1].sum()

    return Affine, Block, Net


def state_to_numpy(state_dict):
    """A state dict's tensors (gputorch or torch) as NumPy arrays, same keys and order."""
    out = OrderedDict()
    for k, v in state_dict.items():
        out[k] = np.array(v.detach().cpu().numpy() if hasattr(v, "numpy") else v, copy=True)
    return out


def copy_state(src_module, dst_module, dst_lib, device=None):
    """Load ``src_module``'s state into ``dst_module`` (of library ``dst_lib``) through NumPy."""
    arrays = state_to_numpy(src_module.state_dict())
    kwargs = {} if device is None else {"device": device}
    return dst_module.load_state_dict(OrderedDict((k, dst_lib.tensor(a, **kwargs)) for k, a in arrays.items()))
