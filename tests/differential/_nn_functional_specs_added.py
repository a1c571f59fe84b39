"""Argument generators for the ``nn.functional`` names added with the 3-d layers, fold/unfold,
pixel and channel shuffles, unpooling, LP pooling, local response norm, embedding bags, the
margin, triplet and CTC losses, the spatial transformers (affine_grid, grid_sample) and
gumbel_softmax (``sig(b) -> (args, kwargs)``, as in :mod:`_nn_functional_specs`)."""
from ._nn_functional_specs import _class_problem, _pool_input, adaptive_pool, avg_pool, conv, float_dtype, max_pool
from ._nn_functional_specs import reduction_kw
from ._specs_common import _kw, bool_src


def lp_pool(spatial):
    def sig(b):
        x = _pool_input(b, spatial)
        kernel = b.int_in(1, 3)
        kwargs = _kw(stride=str(b.int_in(1, 3)) if b.chance(0.5) else None,
                     ceil_mode=bool_src(b) if b.chance(0.3) else None)
        return [x, b.choice(["1.0", "2.0", "3.0", "0.5"]), str(kernel)], kwargs
    return sig


def max_unpool(spatial):
    """Unpool the indices of a max pool of the same geometry (kernel 2, stride 2)."""
    def sig(b):
        x = _pool_input(b, spatial, min_size=2)
        pool = f"max_pool{spatial}d"
        kernel = "2"
        pooled = f"T.nn.functional.{pool}({x}, {kernel}, return_indices=True)"
        return [f"{pooled}[0]", f"{pooled}[1]", kernel], {}
    return sig


def pixel_shuffle(b):
    r = b.int_in(1, 3)
    batch = (b.int_in(1, 2),) * b.int_in(0, 1)
    x = b.tensor(batch + (r * r * b.int_in(1, 2), b.int_in(1, 3), b.int_in(1, 3)), float_dtype(b))
    return [x, str(r)], {}


def pixel_unshuffle(b):
    r = b.int_in(1, 3)
    batch = (b.int_in(1, 2),) * b.int_in(0, 1)
    x = b.tensor(batch + (b.int_in(1, 2), r * b.int_in(1, 2), r * b.int_in(1, 2)), float_dtype(b))
    return [x, str(r)], {}


def channel_shuffle(b):
    groups = b.int_in(1, 3)
    x = b.tensor((b.int_in(1, 2), groups * b.int_in(1, 2), b.int_in(1, 3), b.int_in(1, 3)), float_dtype(b))
    return [x, str(groups)], {}


def unfold(b):
    x = _pool_input(b, 2)
    kernel = b.int_in(1, 2)
    kwargs = _kw(dilation=str(b.int_in(1, 2)) if b.chance(0.3) else None,
                 padding=str(b.int_in(0, 1)) if b.chance(0.4) else None,
                 stride=str(b.int_in(1, 2)) if b.chance(0.4) else None)
    return [x, str(kernel)], kwargs


def fold(b):
    """``fold`` of blocks shaped as ``unfold`` of an (out, out) image with kernel k makes them."""
    k, out = b.int_in(1, 2), b.int_in(2, 4)
    channels = b.int_in(1, 2)
    blocks = (out - k + 1) ** 2
    batch = (b.int_in(1, 2),) if b.chance(0.8) else ()
    x = b.tensor(batch + (channels * k * k, blocks), float_dtype(b))
    return [x, repr((out, out)), str(k)], {}


def local_response_norm(b):
    """Floating inputs only: on integer inputs torch's result comes from a truncating integer average
    pool of the squares (an artifact, not a documented behaviour)."""
    x = b.tensor((b.int_in(1, 2), b.int_in(1, 4), b.int_in(1, 4), b.int_in(1, 3)),
                 b.choice(["float32", "float32", "float64"]))
    return [x, str(b.int_in(1, 3))], _kw(alpha=b.choice(["1e-4", "0.1", None]), beta=b.choice(["0.75", "0.5", None]),
                                          k=b.choice(["1.0", "2.0", None]))


def triplet_margin_loss(b):
    dtype = float_dtype(b)
    shape = (b.int_in(1, 3), b.int_in(1, 4)) if b.chance(0.85) else (b.int_in(1, 4),)
    args = [b.tensor(shape, dtype) for _ in range(3)]
    kwargs = _kw(margin=b.choice(["1.0", "0.5", None]), p=b.choice(["1.0", "2.0", "3.0", None]),
                 swap=bool_src(b) if b.chance(0.3) else None)
    kwargs.update(reduction_kw(b))
    return args, kwargs


def multi_margin_loss(b):
    x, target, classes, dtype = _class_problem(b, allow_probs=False)
    if len(b.shapes[x]) > 2:   # (N, C) or (C,) only
        x = b.tensor((b.int_in(1, 3), classes), dtype)
        target = b.index_tensor(classes, (b.shapes[x][0],), allow_negative=False)
    kwargs = _kw(p=b.choice(["1", "2", None]), margin=b.choice(["1.0", "0.5", None]))
    if b.chance(0.3):
        kwargs["weight"] = b.tensor((classes,), dtype, grad=False, layout="contiguous",
                                    values=b.rng.uniform(0.1, 2, classes).round(2))
    kwargs.update(reduction_kw(b))
    return [x, target], kwargs


def multilabel_margin_loss(b):
    classes, batch = b.int_in(1, 4), b.int_in(1, 3)
    x = b.tensor((batch, classes), float_dtype(b))
    labels = b.rng.integers(-1, classes, (batch, classes))
    target = b.tensor((batch, classes), "int64", values=labels, grad=False, layout="contiguous")
    return [x, target], reduction_kw(b)


def embedding_bag(b):
    rows, width = b.int_in(2, 6), b.int_in(1, 3)
    weight = b.tensor((rows, width), b.choice(["float32", "float64"]))
    bags, per_bag = b.int_in(1, 3), b.int_in(1, 3)
    index = b.index_tensor(rows, (bags, per_bag), allow_negative=False)
    mode = b.choice(["'sum'", "'mean'", "'max'"])
    kwargs = {"mode": mode}
    if mode == "'sum'" and b.chance(0.3):
        kwargs["per_sample_weights"] = b.tensor((bags, per_bag), b.dtypes[weight], grad=False)
    if b.chance(0.3):
        kwargs["padding_idx"] = str(b.int_in(0, rows - 1))
    return [index, weight], kwargs


def ctc_loss(b):
    """Log-probabilities (T, N, C) with input lengths T and padded targets of length <= (T - 1) / 2."""
    steps, batch, classes = b.int_in(3, 6), b.int_in(1, 2), b.int_in(2, 4)
    dtype = b.choice(["float32", "float64"])
    logits = b.tensor((steps, batch, classes), dtype, layout="contiguous")
    length = b.int_in(1, (steps - 1) // 2)
    labels = b.rng.integers(1, classes, (batch, length))
    target = b.tensor((batch, length), "int64", values=labels, grad=False, layout="contiguous")
    kwargs = _kw(blank=None, zero_infinity=bool_src(b) if b.chance(0.3) else None)
    kwargs.update(reduction_kw(b))
    return [f"{logits}.log_softmax(2)", target, repr((steps,) * batch), repr((length,) * batch)], kwargs


def affine_grid(b):
    dtype = b.choice(["float32", "float64"]) if b.chance(0.95) else "int64"
    n = b.int_in(1, 2)
    spatial = tuple(b.int_in(1, 4) for _ in range(b.choice([2, 2, 3])))
    k = len(spatial)
    theta = b.tensor((n, k, k + 1) if b.chance(0.95) else (n, k + 1, k + 1), dtype)
    return [theta, repr((n, b.int_in(1, 3)) + spatial)], {"align_corners": bool_src(b)}


def grid_sample(b):
    dtype = b.choice(["float32", "float64"])
    k = b.choice([2, 2, 3])
    n, c = b.int_in(1, 2), b.int_in(1, 2)
    x = b.tensor((n, c) + tuple(b.int_in(1, 4) for _ in range(k)), dtype)
    out = tuple(b.int_in(1, 3) for _ in range(k))
    grid = b.tensor((n,) + out + (k,), dtype, values=b.rng.uniform(-1.3, 1.3, (n,) + out + (k,)).round(2))
    kwargs = {"mode": b.choice(["'bilinear'", "'nearest'"]),
              "padding_mode": b.choice(["'zeros'", "'border'", "'reflection'"]), "align_corners": bool_src(b)}
    return [x, grid], kwargs


def _fractional_geometry(b, dims):
    sizes = tuple(b.int_in(3, 6) for _ in range(dims))
    kernel = tuple(b.int_in(1, 2) for _ in range(dims))
    room = 2 if dims == 2 else 1    # the 3-d form also refuses windows reaching the last input exactly
    out = tuple(b.int_in(1, s - k + room) for s, k in zip(sizes, kernel))
    return sizes, kernel, out


def fractional_max_pool(dims, with_indices=False):
    """Always with ``_random_samples`` (the pooling places are otherwise random)."""
    def sig(b):
        sizes, kernel, out = _fractional_geometry(b, dims)
        batch, channels = b.int_in(1, 2), b.int_in(1, 2)
        dtype = b.choice(["float32", "float64"])
        x = b.tensor((batch, channels) + sizes, dtype)
        samples = b.tensor((batch, channels, dims), dtype, grad=False,
                           values=b.rng.uniform(0, 1, (batch, channels, dims)).round(3))
        kernel_src = repr(kernel) if b.chance(0.5) or len(set(kernel)) > 1 else str(kernel[0])
        kwargs = {"_random_samples": samples}
        if b.chance(0.7):
            kwargs["output_size"] = repr(out)
        else:
            kwargs["output_ratio"] = repr(tuple(round(float(b.rng.uniform(0.3, 0.9)), 2) for _ in range(dims)))
        if not with_indices and b.chance(0.4):
            kwargs["return_indices"] = "True"
        return [x, kernel_src], kwargs
    return sig


def gumbel_softmax(b):
    x = b.tensor(min_ndim=1, max_ndim=3, dtype=b.choice(["float32", "float64"]))
    return [x], _kw(tau=b.choice(["0.5", "1", None]), hard=bool_src(b) if b.chance(0.5) else None,
                    dim=str(b.dim(len(b.shapes[x]), allow_bad=False)) if b.chance(0.5) else None)


FUNCTIONAL_ADDED = {
    "conv3d": conv(3), "conv_transpose3d": conv(3, True),
    "max_pool3d": max_pool(3), "max_pool3d_with_indices": max_pool(3, True), "avg_pool3d": avg_pool(3),
    "adaptive_avg_pool3d": adaptive_pool(3), "adaptive_max_pool3d": adaptive_pool(3, True),
    "adaptive_max_pool3d_with_indices": adaptive_pool(3),
    "lp_pool1d": lp_pool(1), "lp_pool2d": lp_pool(2), "lp_pool3d": lp_pool(3),
    "max_unpool1d": max_unpool(1), "max_unpool2d": max_unpool(2), "max_unpool3d": max_unpool(3),
    "pixel_shuffle": pixel_shuffle, "pixel_unshuffle": pixel_unshuffle,
    "channel_shuffle": channel_shuffle, "native_channel_shuffle": channel_shuffle,
    "unfold": unfold, "fold": fold, "local_response_norm": local_response_norm,
    "triplet_margin_loss": triplet_margin_loss, "multi_margin_loss": multi_margin_loss,
    "multilabel_margin_loss": multilabel_margin_loss, "embedding_bag": embedding_bag, "ctc_loss": ctc_loss,
    "affine_grid": affine_grid, "grid_sample": grid_sample, "gumbel_softmax": gumbel_softmax,
    "fractional_max_pool2d": fractional_max_pool(2), "fractional_max_pool3d": fractional_max_pool(3),
    "fractional_max_pool2d_with_indices": fractional_max_pool(2, True),
    "fractional_max_pool3d_with_indices": fractional_max_pool(3, True),
}

NOT_COVERED_ADDED = {
    "triplet_margin_with_distance_loss": "takes a Python callable (the distance); covered against torch in "
                                         "tests/nn/test_loss.py",
}
