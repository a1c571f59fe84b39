"""The parts of ``gputorch.save`` / ``gputorch.load`` (``gputorch/serialization.py`` is the public face).

- ``torch_names``: the names PyTorch's files use (storage classes, dtypes, rebuild functions);
- ``storages``: which memory a tensor views (saving) and views of a loaded storage (loading);
- ``torch_pickler`` / ``torch_zip``: writing PyTorch's zip format;
- ``torch_zip_reader``: reading it (storages read once, or memory-mapped);
- ``torch_unpickler``: unpicklers for every format, and the weights-only rules;
- ``safe_globals``: the globals a checkpoint may name (PyTorch's allow-list) and ``add_safe_globals``;
- ``rebuild``: gputorch's versions of PyTorch's ``_rebuild_tensor_v2`` and friends;
- ``legacy_format``: PyTorch's pre-1.6 (non-zip) files;
- ``gputorch_v1``: the format gputorch 0.1.0 wrote (still read);
- ``placement``: ``map_location``;
- ``atomic_file``: crash-safe writes of a path.
"""
