"""Disagreements with torch that are known, each with the reason it is not fixed yet.

A case whose every problem matches an entry here is counted as *known*, not as a failure:
the summary reports it, and a case that disagrees in any other way still fails its test.
Each entry is ``(group pattern, problem pattern, reason)``; both patterns are regular
expressions searched in the group name (``"flip"``, ``"F.conv2d"``, ``"nn.MaxPool1d"``) and in
the problem text that ``_runner.compare`` wrote. An entry may add a fourth, ``case pattern``,
searched in the case's source (its body and leaves): the entry then holds only for cases whose
inputs show it (e.g. non-finite or near-overflow values, ``_EDGE_INPUTS``), so the same problem
on ordinary inputs still fails. Keep the list short: fix a family and its
entry goes (the closing note of each round lists what is left).
"""
import os
import re

# Inputs with an infinite or NaN element, or one near float32's overflow threshold (|x| >= 1e30).
_EDGE_INPUTS = r"\b(inf|nan)\b|e\+(3\d|[1-9]\d\d)\b"

_REFUSED = r"not implemented for \\?'(Bool|Byte|Char|Short|Int|Long|Half)\\?'"

KNOWN = [
    # Kernels torch lacks for some dtypes: gputorch computes a result (or refuses with another
    # exception family or message). One dtype-support table would settle these.
    (r".", r"^torch raised NotImplementedError\('\"\w+(<>)?\" " + _REFUSED + r".*gputorch succeeded",
     "dtype support: gputorch has kernels for dtypes torch refuses"),
    (r".", r"^error family: torch NotImplementedError\('\"\w+\" " + _REFUSED,
     "dtype support: refused with another exception family"),
    (r".", r"^error family: torch RuntimeError\(\"result type \w+ can't be cast to the desired output type",
     "dtype support: torch checks the output cast before the kernel's dtype"),
    (r".", r"^torch raised RuntimeError\('Autograd not support dtype", "dtype support: integer autograd"),
    (r".", r"could not infer output dtype", "dtype support: bool mean"),
    (r".", r"^error family: torch NotImplementedError.* vs gputorch RuntimeError\('\w+\(\): expected a floating point",
     "dtype support: refused with another exception family"),
    (r"^rsub$", r"argument alpha must not be a floating point number", "dtype support: float alpha with integers"),
    (r"^take_along_dim$", r"view size is not compatible", "lenient: torch's view of non-contiguous indices fails"),
    (r".", r"^gputorch raised RuntimeError\(\"bfloat16 tensors are CPU-only in gputorch",
     "bfloat16 on CUDA: refused by design (CuPy's bfloat16 is experimental; README, issue 13)"),
    (r"^sparse_coo_tensor$", r"^out: values differ",
     "torch bug: with invariant checks off (torch warns so), a strided values tensor is read as if it were "
     "contiguous, filling positions no index names"),
    (r"^matrix_exp$", r"^torch raised RuntimeError\(\"view size is not compatible",
     "lenient: torch's half-precision matrix_exp views an expanded input and fails"),
    (r"^(__rpow__|nanmedian|trace|baddbmm_|hypot_?|logaddexp|nn\.SoftMarginLoss|F\.selu_|frac_)$",
     r"^error family: torch (RuntimeError|IndexError)", "dtype support: the order of argument checks differs"),
    # Argument parsing more lenient than torch's (accepts what torch refuses; never a wrong value).
    (r"^(flip|reshape|permute|broadcast_to|roll)$",
     r"^(torch raised (TypeError|RuntimeError)\(.*\), gputorch succeeded|error family: torch TypeError\([\"']\w+\(\):?"
     r" (argument|takes))",
     "lenient argument parsing: bare ints and missing dims accepted"),
    # Writes into expanded (stride-0) tensors that torch performs: NumPy marks broadcast views
    # read-only and gives no writable alias of them.
    (r".", r"^gputorch raised RuntimeError\('unsupported operation: more than one element",
     "writes into expanded tensors: refused where torch writes"),
    (r"^index_fill_?$", r"^(error family: torch|torch raised) RuntimeError\('setStorage",
     "torch quirk: index_fill of a tensor with a stride-0 dimension fails in torch's storage check"),
    # Reflected dunders called directly with a tensor and keyword arguments: the harness's
    # iteration over the result differs; Python never calls them this way.
    (r"^__r\w+__$", r"^(out: type object \(torch\) vs tensor|backward: different sets of gradients)",
     "reflected dunders called by hand"),
    # Tensor bounds of clamp with more dimensions than the input: torch's backward fails to reduce
    # the bound's gradient; gputorch returns it (the forward broadcasts the same way in both).
    (r"^(clamp|clip)$", r"^backward: torch raised RuntimeError\(\"output with shape .* doesn't match the broadcast",
     "torch quirk: clamp's backward with bounds of more dimensions than the input"),
    # torch's take_along_dim checks no index bound (it reads outside the tensor); gputorch raises.
    (r"^take_along_dim$", r"^gputorch raised RuntimeError\('index -?\d+ is out of bounds",
     "torch quirk: take_along_dim reads out of bounds without an error"),
    # torch's backward of 'area' interpolation to an empty size refuses the empty gradient.
    (r"^F\.interpolate$", r"^backward: torch raised RuntimeError\('adaptive_avg_pool\dd_backward\(\): Expected "
     r"grad_output to have non-zero size", "torch quirk: area interpolation's backward to an empty output"),
    # Ties: which of equal values' indices kthvalue and topk return is not specified by PyTorch (its CPU
    # kernels' selection order decides); the values agree and are compared.
    (r"^(kthvalue|topk)$", r"^(out\[1\]: values differ|grad of leaf \d+: values differ)",
     "ties: the index returned among equal values is unspecified"),
    (r"^topk$", r"^(out\[\d\]|grad of leaf \d+): values differ",
     "topk with sorted=False: the order of the k values is unspecified (torch returns them in its "
     "selection's order, gputorch sorted)", r"sorted=False"),
    (r"^(quantile|nanquantile)$", r"^grad of leaf \d+: values differ",
     "ties: torch's sort orders equal values unspecifiedly, so the two interpolated neighbours' weights can "
     "land on either of two equal elements (gputorch's sort is stable)"),
    # In-place logical ops on leaves: torch lets a bool-valued result through autograd's check.
    (r"^logical_(not|and|or|xor)_$", r"is being used in an in-place operation", "in-place logical ops on leaves"),
    # Numerics at the edges (inf/NaN/huge inputs, singular or empty inputs).
    (r"^(cumprod|__rmod__|__rdiv__|F\.group_norm|det|pow|addcdiv)$",
     r"(values differ|backward: gputorch raised|backward: torch raised)",
     "numerics at the edges: inf/NaN/huge, singular or empty inputs"),
    (r"^(scatter_?|full_like)$", r"without overflow", "overflowing fill values: gputorch and torch differ on which"),
    (r"^index_select$", r"^error family: torch RuntimeError\('index_select\(\): Index to scalar",
     "index_select on a 0-d tensor with several indices: ValueError here"),
    (r"^__rdiv__$", r"(values differ|must match the size)", "reflected dunders called by hand"),
    (r"^__setitem__$", r"Index put requires the source and destination dtypes match",
     "index assignment with a source of another dtype: PyTorch casts in some cases"),
    (r"^addbmm_?$", r"(dtype int32 \(torch\) vs int64|doesn't match the broadcast shape)",
     "addbmm: int32 result promoted; in place, PyTorch resizes a broadcast input"),
    (r"^F\.interpolate$", r"mode 'bicubic'", "bicubic interpolation is not implemented"),
    # Torch bugs or torch-internal quirks (gputorch gives the documented or mathematically right result).
    # torch 2.13's CPU batch norm backward, eval mode, on an input laid out channels_last_3d with a
    # spatial size of 1 (e.g. x.permute(0, 4, 2, 3, 1) of (N, 1, D, H, C)): its bias gradient is not the
    # sum of the upstream gradient per channel, and the input gradient is off too (both right with
    # x.contiguous()); gputorch's are.
    (r"^nn\.BatchNorm3d$", r"^grad of leaf \d+: values differ",
     "torch bug: BatchNorm3d backward on channels_last_3d inputs (bias gradient is not the channel sum)"),
    (r"^(std|var|std_mean|var_mean)$", r"^grad of leaf",
     "torch bug: with dim=() the backward of std/var reduces nothing (inf/NaN gradients); gputorch's is the "
     "true derivative of the full reduction it returns"),
    (r"^kron$", r"^torch raised RuntimeError\(\"view size is not compatible",
     "torch bug: kron of non-contiguous inputs fails inside torch with a view error"),
    (r"^logsumexp$", r"^torch raised RuntimeError\(\"output with shape \[\] doesn't match",
     "torch quirk: logsumexp with dim=() fails inside torch"),
    (r"^(topk|kthvalue|median|nanmedian|F\.max_pool\w*)$", r"^out\[1\]: values differ",
     "ties: which index torch returns among equal values is unspecified (gputorch returns the first)"),
    (r"^(clamp|clip|clamp_|clip_|rsub|fmod|xlogy_)$", r"(received an invalid combination of arguments|"
     r"min and max must both be Tensors)",
     "argument parsing: torch's parser refuses some mixes of numbers and tensors that gputorch accepts or "
     "refuses in another combination"),
    (r"^__r\w+__$", r".", "reflected dunders called by hand with keyword arguments (alpha=, rounding_mode=): "
     "Python never calls them so"),
    (r"^(eq|ne|not_equal|lt|le|less|less_equal|gt|ge|greater|greater_equal|logical_and|logical_or|logical_xor)_$",
     r"requires_grad (True|False) \(torch\)",
     "torch quirk: an in-place comparison or logical op records (or drops) history inconsistently on "
     "tensors whose other operand requires grad"),
    (r"^(nn\.HuberLoss|F\.huber_loss)$", r"(Found dtype \w+ but expected|can't be cast to the desired output type Bool)",
     "torch quirk: huber_loss of mixed dtypes fails in torch's backward kernel"),
    (r"^nanmedian$", r"^out\[0\]: values differ", "torch bug: nanmedian of an all-NaN slice returns "
     "uninitialised memory (e.g. 2.5e-323) on the CPU"),
    (r"^(atan2_?|arctan2_?|__pow__|__rpow__|pow_?)$", r"^grad of leaf \d: values differ at .*float(64|32)",
     "mixed precision: torch computes a wider leaf's gradient term in the narrower operand's precision "
     "(float32, or float16 for an in-place pow_ of a float16 tensor) before widening"),
    (r"^(F\.softmin|F\.softmax|F\.log_softmax|softmax|log_softmax|special\.softmax|special\.log_softmax)$",
     r"^grad of leaf \d: values differ at .*float(64|32)",
     "mixed precision: with dtype=float32 on a float64 input (or dtype=float16 on a float32 one) both backward "
     "passes run in the narrower dtype and round differently (an ulp of it), then widen; compared at the "
     "wider dtype's tolerance"),
    (r"^(nn\.InstanceNorm\dd|nn\.GroupNorm|nn\.BatchNorm\dd|F\.group_norm|F\.instance_norm)$",
     r"values differ at .* vs gputorch np\.float32\(0\.0\)",
     "numerics: over constant (expanded) inputs torch's float32 variance has rounding error (outputs "
     "~1e-5 where the exact result, gputorch's, is 0)"),
    (r"^(logspace|linspace)$", r"(values differ|not implemented for \\?'Bool)",
     "integer and bool linspace/logspace: torch steps in the integer type; gputorch computes in floating "
     "point and rounds"),
    (r"^F\.native_channel_shuffle$", r"derivative for aten::native_channel_shuffle is not implemented",
     "torch has no derivative of native_channel_shuffle; gputorch's (a permutation of channels) has one"),
    (r"^(polygamma_?|matrix_exp|mvlgamma_?)$", r"values differ at .*np\.float16",
     "float16: torch computes these in float16 (overflowing to inf/NaN); gputorch in float64, rounded once"),
    (r"^(matrix_exp|logdet|slogdet)$", r"^(out|input 0 after the call): values differ at .*float64\(",
     "matrix functions: torch's algorithm (Pade degree and scaling, LU) differs in the last digits"),
    (r"^polygamma_?$", r"values differ", "accuracy: torch's polygamma (n >= 1) is good to about 1e-9 and "
     "differs at the poles; gputorch's agrees with scipy.special to 1e-13"),
    (r"^(slogdet|logdet)$", r"^out\[0\]: values differ|^out: values differ",
     "(nearly) singular matrices: whether the sign is 0 or +-1 depends on the LU pivots' rounding"),
    (r"^cholesky$", r"(not implemented for \\?'Half|Expected a floating point or complex tensor as input)",
     "dtype support: torch skips its dtype check for empty matrices"),
    (r"^native_channel_shuffle$", r"derivative for aten::native_channel_shuffle is not implemented",
     "torch has no derivative of native_channel_shuffle; gputorch's (a permutation of channels) has one"),
    (r"^detach_copy$", r"(requires_grad|derivative for aten::detach_copy)", "torch bug: detach_copy's result requires grad (and fails in backward)"),
    (r"^narrow_copy$", r"^(grad of leaf|backward: torch raised RuntimeError\('The size of tensor a \(0\) must match)",
     "torch bug: narrow_copy with a negative start gives a zero gradient (or a backward that fails on a "
     "size mismatch)"),
    (r"^typename$", r"values differ|\(torch\) vs", "the reference torch runs on the CPU: its type names say CPU "
     "where gputorch's name the GPU"),
    (r"^(svd|qr)$", r"^(out\[\d\]|grad of leaf \d|input \d after the call): values differ",
     "decompositions: the signs of singular vectors (and Householder signs in QR) depend on the LAPACK "
     "build, and so do the gradients of a random weighted sum of them; the products they form and "
     "sign-invariant losses agree (tests/ops/test_linalg_decompositions.py). A sign-invariant "
     "comparison in this suite is still to be written"),
    (r"^complex linalg\.(svd|eigh|qr)$", r"^(out\[\d\]|grad of leaf \d|input \d after the call): values differ",
     "decompositions of complex matrices: each singular or eigen vector is fixed only up to a phase "
     "e^{i phi}, which the LAPACK build picks; eigenvalues, singular values and gauge-invariant losses "
     "agree (tests/ops/test_complex_linalg.py)"),
    (r"^complex linalg\.qr$", r"^backward: gputorch raised LinAlgError\('torch\.linalg\.solve",
     "complex QR of a rank-deficient matrix (singular R): gputorch's complex gradient solves with R^H by a "
     "general solver, which refuses it; torch's triangular solve returns inf/NaN gradients"),
    (r"^complex linalg\.(svdvals|svd|pinv|eigh|eigvalsh|matrix_rank)$", r"^(torch raised _LinAlgError\('linalg\.(svd|eigh)|"
     r"(out|out\[\d\]|grad of leaf \d): values differ .*(nan|inf|e\+[23]\d))",
     "complex decompositions of exactly rank-deficient (expanded), near-overflow or non-finite matrices: "
     "torch's LAPACK build may fail to converge, its rounding-level singular values differ, and NaN/inf "
     "spread differently"),
    (r"^(svd|qr|pdist|F\.pdist)$", r"(not implemented for \\?'Half|\"pdist_backward\" not implemented)",
     "dtype support: float16 linear algebra (torch accepts some empty inputs, refuses pdist's backward)"),
    (r"^norm$", r"^grad of leaf \d: type NoneType \(torch\)",
     "torch quirk: torch.norm with p=0 records no gradient; gputorch gives the zero gradient (as "
     "torch.linalg.vector_norm does)"),
    (r"^(F\.lp_pool\dd|nn\.LPPool\dd|pairwise_distance|F\.pairwise_distance|cdist|cosine_similarity)$",
     r"values differ at .*(nan|inf)",
     "numerics at the edges: 0/0 at all-zero pooling windows and distances, norms of values near the "
     "overflow threshold"),
    (r"^\w+_$", r"^error family: torch RuntimeError\('a (view of a )?leaf Variable",
     "order of checks: torch refuses in-place ops on (views of) leaves before it checks dim and other "
     "arguments (gputorch's autograd check comes after the op's own)"),
    (r"^F\.conv_transpose\dd$", r"^gputorch raised RuntimeError\('Given input size per channel",
     "torch quirk: with a non-contiguous input torch's transposed convolution skips its output-size check "
     "and returns an empty tensor; its other paths raise as gputorch does"),
    (r"^(softmax|log_softmax|F\.softmin|F\.softmax|F\.log_softmax|nn\.Softmax|nn\.LogSoftmax|nn\.Softmin|"
     r"randn|randn_like|matmul|bmm|__matmul__|mm|median|nanmedian|matrix_power)$",
     r"^gputorch raised (NotImplementedError|RuntimeError)\(.*(not implemented for|expected (scalar type|m1 and m2))"
     r".*, torch succeeded",
     "empty inputs: torch skips some kernels' dtype checks when there is nothing to compute"),
    (r"^(median|nanmedian)$", r"^out(\[0\])?: values differ at 1/1",
     "the median of an empty integer tensor: torch returns 0, gputorch the dtype's lowest value (unspecified)"),
    (r"^(F\.celu|prod|logit|__ifloordiv__|floor_divide|F\.multilabel_margin_loss|cholesky_solve|pinverse|"
     r"inverse)$",
     r"values differ at .*(nan|inf|-0\.0)",
     "NaN, infinity and signed-zero conventions at the edges (0 * inf, gradients at NaN inputs, -0.0)"),
    (r"^ldexp_?$", r"^(grad of leaf \d|out|input \d after the call): values differ",
     "ldexp: torch's gradient computes 2**other in the exponent's integer dtype (0 for negative exponents), "
     "and with floating exponents its precision of 2**other follows rules gputorch does not copy"),
    (r"^detach_$", r"^torch raised RuntimeError\(\"Can't detach views in-place",
     "detach_ of a view whose base does not require grad: torch refuses every view; gputorch, whose "
     "detached tensors keep their view base, refuses views of tensors that require grad only"),
    (r"^dist$", r"^(backward: torch raised RuntimeError\(\"Expected a proper Tensor but got None|grad of leaf \d: "
                r"type NoneType \(torch\) vs tensor)",
     "torch bug: dist with p=0 has no backward in torch (an undefined gradient); gputorch's is zero"),
    (r"^resize(_as)?$", r"^torch raised TypeError\('view\(\) received an invalid combination",
     "torch quirk: the deprecated out-of-place resize to a 0-d shape fails inside torch (view() of no sizes)"),
    (r"^vander$", r"^backward: torch raised RuntimeError\('one of the variables needed for gradient computation",
     "torch bug: torch.vander's backward fails (it modifies a tensor its cumprod saved); gputorch's passes gradcheck"),
    (r"^cov$", r"^(input 0 after the call: values differ|torch raised RuntimeError\('(expected m1 and m2 to have "
               r"the same dtype|(a view of )?a leaf Variable that requires grad))",
     "torch bug: cov with weights of an input of one observation or one variable centres the input in place "
     "(writing into it, refusing leaves that require grad, failing for weights of a wider dtype)"),
    (r"^index_reduce_?$", r"^backward: torch raised IndexError\('index_fill_\(\): Expected dtype int64 for index",
     "torch bug: index_reduce's backward with include_self=False fails for an int32 index"),
    (r"^lu_unpack$", r"^(out\[\d\]: requires_grad True \(torch\) vs False|backward: torch raised RuntimeError\('triu: "
                     r"input tensor must have at least 2 dimensions|backward: torch raised RuntimeError\('start \(0\) \+ length \(\d+\) exceeds dimension size \(0\))",
     "torch quirk: lu_unpack's empty L and U (unpack_data=False) require grad, and its backward then fails"),
    (r"^ormqr$", r"^grad of leaf \d: values differ at .*np\.float32",
     "precision: torch's float32 backward of ormqr loses digits (gputorch's float32 gradient is the closer to "
     "the float64 one)"),
    # gputorch limits, not wrong values.
    (r"^to_dlpack$", r"^gputorch raised BufferError\('Cannot export readonly array",
     "expanded tensors: NumPy marks broadcast views read-only and its DLPack export refuses them"),
    (r".", r"in-place operation on a view of a tensor that requires grad is not supported by gputorch",
     "in-place ops on a view of a non-contiguous base that requires grad: not supported yet (clear error)"),
    (r"^(addbmm_?|addmm|addr|inner|baddbmm|matmul|true_divide|divide|__truediv__|__pow__|pow_?|atan2_?|"
     r"renorm_?|frobenius_norm|lu_solve|arctan2_?|F\.gaussian_nll_loss|F\.batch_norm|F\.instance_norm|"
     r"F\.scaled_dot_product_attention|bilinear|F\.bilinear|gru|lstm|rnn_relu|rnn_tanh|"
     r"F\.log_softmax|sum|xlogy|std|var|std_mean|var_mean|nn\.(InstanceNorm\dd|GroupNorm|BatchNorm\dd))$",
     r"values differ at .*(inf|nan|e[+-]3\d|e[+-]2\d\d|float16)",
     "numerics at the edges: sums and products near the overflow threshold, NaN/inf inputs, float16 "
     "rounding (torch's kernels accumulate in another order or precision)"),
]

# Known on a real GPU only (the simulated CuPy computes these as the CPU does). Float32 denormals
# flushed to zero by CuPy's kernels are not listed: they show as differing values of many ops
# (ceil_, erfinv, nextafter, xlogy_, igammac_, floor division) and stay visible on purpose.
# torch's complex add/sub computes ``self + alpha * other`` in complex arithmetic even for alpha 1, so
# an infinite or NaN part of ``other`` makes the other part NaN too (inf * 0 in the product).
KNOWN += [
    (r"^complex (add|sub)$", r"^out: values differ .*torch np\.complex\d+\([^)]*nan",
     "torch's complex add/sub multiplies by alpha=1 in complex arithmetic: NaN spreads from inf/NaN parts"),
    (r"^complex (acosh|atanh|asinh|acos|asin|atan|tan|log1p|expm1|rsqrt|exp2|log2|log10)$",
     r"^(grad of leaf \d|out): values differ .*(nan|inf)", "complex inverse-trigonometric and "
     "logarithm-like functions (and their gradients) at infinite or NaN parts: torch's std::complex "
     "formulas and NumPy's propagate special values differently"),
    (r"^complex acosh$", r"^grad of leaf 0: values differ", "complex acosh at a zero imaginary part (-0.0 or "
     "+0.0 on the branch cut of sqrt(z - 1)): NumPy honours the zero's sign, torch's formula does not"),
    (r"^complex where$", r"^backward: torch raised RuntimeError\('Expected isFloatingType\(grad", "torch's where "
     "cannot send a complex gradient to a real operand (gputorch keeps its real part)"),
    (r"^complex (mul|div|matmul|reciprocal|pow|addcmul|addcdiv|einsum|addmm|square)$",
     r"values differ .*(torch np\.complex\d+\([^)]*(inf|nan)|gputorch np\.complex\d+\([^)]*(inf|nan))",
     "complex products and quotients with infinite or NaN parts: torch's C++ std::complex (which recovers "
     "infinities) and NumPy/BLAS disagree on which special value results"),
    (r"^complex (linalg\.)?(sgn|cumprod|prod|std|var|std_mean|var_mean|vdot|norm|vector_norm|matrix_norm)$",
     r"values differ .*(nan|inf|e\+[23]\d)", "complex reductions, sgn and their gradients at infinite, NaN or "
     "near-overflow parts, or with no degrees of freedom left (NaN results): torch's std::complex kernels and "
     "NumPy's ufuncs give other special values (e.g. NaN+0j against NaN+NaNj)"),
    (r"^complex (std|std_mean)$", r"^grad of leaf \d: values differ .*torch np\.complex\d+\(0j\)",
     "std over constant (expanded) slices: torch's variance of equal values is exactly 0 (so a zero "
     "gradient), gputorch's two-pass variance can leave ~1e-17 and a finite gradient (as for real std)"),
    (r"^polar$", r"^grad of leaf \d: values differ .*(inf|nan)", "polar at infinite or near-overflow abs: "
     "torch's gradients go through complex products that meet inf * 0 or overflow elsewhere than gputorch's"),
    (r"^angle$", r"^grad of leaf 0: values differ .*torch np\.complex\d+\(nan\+nanj\)", "angle at 0 + 0j: "
     "torch's gradient is NaN (0/0), gputorch's atan2 rule gives 0"),
    (r"^complex div$", r"^grad of leaf 1: values differ", "div by a wider complex divisor: torch computes "
     "the divisor's gradient in the dividend's narrower precision"),
    (r"^(fft\.\w+|i?stft)$", r"values differ .*(inf|nan|e\+\d\d)", "FFTs of inputs with infinite, NaN or near-overflow values: "
     "MKL (torch) and pocketfft/cuFFT (gputorch) add in other orders, so NaN, inf and overflow spread "
     "to other elements"),
    (r"^fft\.", r"^torch raised RuntimeError\('MKL FFT error", "torch's MKL backend refuses some strided "
     "or one-point plans that pocketfft computes"),
]

# torch bugs that make torch disagree with itself from one call to the next (uninitialised memory):
# the harness's torch-against-torch check skips them too (``torch_nondeterministic``).
TORCH_NONDETERMINISTIC = [
    (r"^(median|nanmedian)$", r"^out(\[\d\])?: values differ",
     "torch bug: median/nanmedian along a dim of an expanded (stride-0) tensor return uninitialised memory "
     "as values and indices (others on each call); over .contiguous() they are right, as gputorch's",
     r"\.expand\("),
]
KNOWN = TORCH_NONDETERMINISTIC + KNOWN   # first: more specific than the entries above

# Entries that hold only for cases whose inputs show ``case pattern`` (the fourth element).
KNOWN += [
    (r"^(batch_norm|F\.batch_norm)$", r"^grad of leaf 0: values differ",
     "torch bug: torch's CPU batch norm backward reads a strided weight (e.g. w[::2] or an expanded "
     "w.expand(C)) as if it were contiguous, so the input gradient uses the wrong channels' weights, or "
     "memory past the weight (right with w.contiguous(), and gputorch's equals that)",
     r"batch_norm\(a\d+(\.\w+\([^)]*\)|\[[^]]*\])?, a\d+(\[[^]]*::2\]|\.expand\()"
     r"|batch_norm\(a\d+, a\d+, a\d+, a\d+\[[^]]*::2\]|weight=a\d+(\[[^]]*::2\]|\.expand\()"),
    (r"^hypot_?$", r"^grad of leaf \d: values differ at .*torch np\.float(32|64)\((-?inf|nan)\)",
     "torch's hypot gradient is grad * x / hypot, which overflows for x near the largest float; gputorch's "
     "grad * (x / hypot) does not (the ratio is at most 1)",
     r"e\+3[0-8]\b|e\+30[0-8]\b"),
    (r"^(cosine_similarity|F\.cosine_similarity)$", r"^(out|grad of leaf \d): values differ",
     "mixed precision: torch's cosine_similarity of operands of two float dtypes computes with the narrower "
     "one in its own precision (float16: 2e-4 off); gputorch computes in the result dtype, as float64 "
     "arithmetic on the same rounded inputs does",
     r"(?s)(?=.*float16)(?=.*float(32|64))|(?=.*float32)(?=.*float64)"),
    (r"^(F\.multilabel_soft_margin_loss|nn\.MultiLabelSoftMarginLoss)$", r"^(out|grad of leaf \d): values differ",
     "mixed precision: torch computes multilabel_soft_margin_loss of a float32 input and float64 target "
     "partly in float32 (its float64 gradient is a float32 value widened); gputorch in the result dtype",
     r"(?s)(?=.*float32)(?=.*float64)"),
    (r"^(__mod__|__rmod__|remainder_?|fmod_?)$", r"^(out|input \d after the call): values differ at .*torch "
     r"np\.float(16|32|64)\(nan\)",
     "remainder of a huge dividend or by a subnormal divisor: torch computes a - b * trunc/floor(a / b), "
     "where a / b overflows to inf and the result becomes NaN; gputorch's remainder is exact (C fmod, "
     "with the sign fixed for remainder)",
     r"\b1e-(3[89]|4\d)\b|\de-(3[89]|4\d)\b|e\+3[0-8]\b"),
    (r"^(F\.conv_transpose[123]d|conv_transpose[123]d)$", r"^gputorch raised RuntimeError\('Given input size per "
     r"channel: .*Output size is too small'\), torch succeeded",
     "an empty transposed-convolution output: torch's float32 (oneDNN) kernel returns it, its float64 kernel "
     "refuses it with this error; gputorch refuses it for every dtype"),
    (r"^(F\.conv[123]d|conv[123]d|F\.conv_transpose[123]d|conv_transpose[123]d)$",
     r"values differ at .*torch np\.float(16|32|64)\((-?inf|-?[\d.e+-]+)\) vs gputorch np\.float(16|32|64)"
     r"\((nan|-?inf)\)",
     "an infinite or NaN weight next to zero padding (gputorch's im2col multiplies the padding's zeros by "
     "it: 0 * inf = NaN, torch's direct convolution skips the padding), or products near the largest float "
     "that overflow to inf of both signs in gputorch's summation order (inf - inf = NaN) and not in torch's",
     r"\b(inf|nan)\b|e\+3[0-8]\b"),
    (r"^view_as_complex$", r"ComplexHalf",
     "dtype support: gputorch has no complex32 (ComplexHalf) dtype, so a float16 tensor cannot be viewed as "
     "complex (torch's view exists, but its values cannot even be read back to NumPy)"),
    (r"^view_as_complex$", r"^torch raised RuntimeError\('Tensor must have a stride divisible by 2",
     "empty permuted tensors: NumPy gives an empty array zero strides, so gputorch cannot see the permutation "
     "that makes torch refuse the view (the strides of empty views are a known gap)",
     r"zeros\(\((0, \d+|\d+, 0)"),
    (r"^(inverse|linalg\.inv)$", r"^gputorch raised LinAlgError\(.*is zero, the inversion could not be completed",
     "subnormal matrices: torch's LAPACK flushes subnormal pivots and returns NaN with info 0 for a singular "
     "matrix of 1e-310 entries; gputorch's LU finds the zero pivot and raises, as for any singular matrix",
     r"\be-3[01]\d\b|\de-3[01]\d"),
    (r"^(batch_norm|F\.batch_norm|nn\.BatchNorm\dd)$",
     r"^(input|module parameter|out) .*values differ at .*torch np\.float(16|32|64)\(-?inf\) vs gputorch "
     r"np\.float(16|32|64)\(nan\)",
     "running statistics of infinite inputs: the GPU kernel's Welford mean turns inf - inf into NaN (as "
     "PyTorch's CUDA kernels do); the CPU's two-pass mean, and torch's CPU kernel, keep the infinity",
     r"\binf\b"),
    (r"^(pdist|F\.pdist)$", r"^grad of leaf \d: values differ at .*torch np\.float(32|64)\(nan\)",
     "torch's pdist gradient multiplies the upstream gradient by the difference before dividing by the "
     "distance, which overflows near the largest float; gputorch's norm gradient divides first",
     r"e\+3[0-8]\b"),
    (r"^addmv_?$", r"^out: values differ at .*(inf|e\+3[0-8])",
     "numerics at the edges: torch's addmv scales the vector by alpha before the product, overflowing "
     "where gputorch's alpha * (A @ x) does not",
     r"e\+3[0-8]\b"),
    (r"^igamma_?$", r"^(out|input \d after the call): values differ at .*torch np\.float32\(0\.0\) vs gputorch "
     r"np\.float32\(1\.0\)",
     "torch bug: torch's float32 igamma(a, x) with a denormal a (1e-40, the limit a -> 0) returns 0; its "
     "float64 kernel, scipy.special.gammainc and gputorch return 1",
     r"\b1e-4\d\b"),
    (r"^(nuclear_norm|norm|matrix_norm|linalg\.matrix_norm|svd|svdvals|linalg\.svd|linalg\.svdvals|pinv|"
     r"pinverse|matrix_rank)$", r"^(grad of leaf \d: values differ|torch raised _LinAlgError\('linalg\.svd)",
     "SVD of matrices with infinite, NaN or near-overflow (3e38) elements: LAPACK's result is undefined "
     "(MKL in torch and OpenBLAS in gputorch return other garbage or fail to converge), and singular "
     "vectors of singular values 1e38 times smaller than the largest are rounding noise",
     _EDGE_INPUTS),
    (r"^(F\.layer_norm|nn\.LayerNorm|layer_norm|native_layer_norm|F\.group_norm|nn\.GroupNorm|group_norm|"
     r"native_group_norm)$", r"values differ at .*nan",
     "torch numerics: torch's layer/group norm kernels form the variance from a sum of squares that "
     "overflows for |x| > sqrt(max) (1e20 in float32, 1e155 in float64), NaN even over a constant row; "
     "torch's own composite (x - mean) / sqrt(var + eps) gives 0 there, as gputorch's two-pass variance",
     _EDGE_INPUTS),
    (r"^(cross|linalg\.cross)$", r"values differ at .*(nan|inf)",
     "torch numerics: torch's cross kernel fuses a*b - c*d into a multiply-add, so near overflow it keeps "
     "an unrounded product (-inf where its own elementwise a[0]*b[1] - a[1]*b[0] and gputorch give NaN)",
     _EDGE_INPUTS),
    (r"^(digamma_?|polygamma_?|lgamma_?)$", r"^grad of leaf \d: values differ",
     "digamma's gradient (trigamma) at its poles, including every float32 below -2**24 (all integers): "
     "torch evaluates pi**2 / sin(pi x)**2 in float32, overflowing pi*x to inf (NaN) beyond 1e38, "
     "gputorch in float64; both are rounding noise at a pole",
     r"-\d(\.\d+)?e\+\d\d\b"),
]

KNOWN_ON_GPU = [
    (r"^(to|int|long|short|char|byte)$", r"^out: values differ",
     "float-to-integer conversion of out-of-range values: undefined in C; CUDA saturates, x86 wraps"),
    (r"^put$", r"^out: values differ", "put with repeated indices: which write wins is unspecified on a GPU"),
]

def _compiled(entries):
    return [(re.compile(g), re.compile(p), reason, re.compile(rest[0]) if rest else None)
            for g, p, reason, *rest in entries]


_COMPILED = _compiled(KNOWN)
_NONDETERMINISTIC = _compiled(TORCH_NONDETERMINISTIC)
_COMPILED_ON_GPU = _COMPILED + _compiled(KNOWN_ON_GPU)


def known_reason(group, problems, device="cpu", source=""):
    """The reason every problem of a case on ``device`` is known (the first entry's), or None.
    ``source``: the case's body and leaves, for the entries with a case pattern."""
    real_gpu = device.startswith("cuda") and not os.environ.get("GPUTORCH_SIMULATE_CUDA")
    reasons = []
    for problem in problems:
        for group_re, problem_re, reason, case_re in (_COMPILED_ON_GPU if real_gpu else _COMPILED):
            if (group_re.search(group) and problem_re.search(problem)
                    and (case_re is None or case_re.search(source))):
                reasons.append(reason)
                break
        else:
            return None
    return reasons[0] if reasons else None


def torch_nondeterministic(group, problems, source):
    """Whether every problem of a torch-against-torch comparison is a known torch nondeterminism."""
    return bool(problems) and all(
        any(g.search(group) and p.search(problem) and (c is None or c.search(source))
            for g, p, _, c in _NONDETERMINISTIC)
        for problem in problems)
