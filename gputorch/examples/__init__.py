"""Runnable examples (``python -m gputorch.examples.NAME``; README.md lists their expected results).

- ``quickstart``: raw tensors and autograd, moved between devices mid-training (``gputorch quickstart``);
- ``demo``: the MNIST-1D CNN under the memory profiler (``gputorch demo``);
- ``mnist1d``: the MNIST-1D authors' MLP, CNN and GRU, and the shuffled-sequence run;
- ``mnist_lenet``: LeNet-5 on MNIST read from IDX files, with DataLoader workers;
- ``char_transformer``: a character-level transformer LM, gradient checkpointing on/off;
- ``devices``: moving a model and optimizer, checkpoints, PyTorch safetensors weights.

Examples are not imported by ``import gputorch``; import them explicitly.
"""
