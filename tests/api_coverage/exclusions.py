"""Which public names of torch gputorch leaves out on purpose, family by family, each with its
reason (the rule the coverage test applies; the names still missing for no such reason are listed
in ``pending.txt`` with the issue that covers them).

A name of a namespace is *public* when it does not start with an underscore. ``EXCLUDED`` maps a
family (a regular expression matched against the whole name, per namespace or ``"*"`` for every
namespace) to its reason.
"""
import re

EXCLUDED = {
    "*": [
        (r"(Optional|Union|Callable|Any|TYPE_CHECKING|TypeVar|List|Tuple|Dict|Sequence|Iterable|Iterator|"
         r"Generic|T_co|T|K|V|overload|cast|deprecated|TypeAlias|ParamSpec|Self|Literal|Protocol)",
         "typing re-exports, not part of torch's API"),
        (r"(os|sys|math|warnings|functools|inspect|importlib|builtins|ctypes|glob|platform|textwrap|threading|"
         r"types|collections|itertools|numbers|dataclasses|np|torch|abc|enum|typing|contextlib|operator|"
         r"weakref|copy|logging|pickle|io|random|string|time|bisect|heapq|queue|multiprocessing|re)",
         "standard-library or third-party modules that torch's namespace happens to import"),
    ],
    "torch": [
        (r".*quant.*|q_\w+|qint\d+|quint\w+|qscheme|per_(channel|tensor)_\w+|int_repr|dequantize|"
         r"fake_quantize_\w+|choose_qparams_optimized|fused_moving_avg_obs_fake_quant",
         "quantization: out of scope (no quantized dtypes)"),
        (r"(cudnn|miopen|mkldnn|fbgemm|xpu|mtia|mps|vulkan)(_\w+)?|is_vulkan_available",
         "vendor-library entry points (cuDNN, MIOpen, oneDNN, FBGEMM) and other accelerators"),
        (r"sparse_(csr|csc|bsr|bsc|compressed)(_tensor)?|(c?col|crow|row)_indices_copy|\w*spmm|\w*smm|"
         r"saddmm|sspaddmm|hspmm|dsmm|hsmm|resize_as_sparse_",
         "compressed sparse layouts and their sparse-dense kernels (COO tensors: ops/sparse_coo.py)"),
        (r"[Ss]ym\w*|sym_\w+", "symbolic shapes (torch.compile internals)"),
        (r"(jit|fx|export|compiler|package|library|hub|onnx|ao|func|overrides|monitor|classes|cpp|"
         r"futures|fork|wait|while_loop|vmap|_\w+|ops|testing_utils|utils|backends|multiprocessing|"
         r"distributed|profiler|amp|nested|masked|signal|sparse|quasirandom|storage|version|torch_version|"
         r"functional|return_types|types|serialization|random|autograd|cuda|cpu|nn|optim|linalg|special|"
         r"fft|distributions|testing|accelerator|hub|mps|xpu|export)",
         "submodules (compared as namespaces of their own where gputorch has them) and JIT/compile internals"),
        (r"(Script\w*|\w*Type|Graph\w*|Node|Value|Block|Use|Code|Argument\w*|FunctionSchema|"
         r"CompilationUnit|ConcreteModuleType\w*|ErrorReport|ExecutionPlan|FileCheck|Gradient|"
         r"IODescriptor|JITException|LiteScriptModule|\w*Logger\w*|LoggerBase|StaticModule|"
         r"ThroughputBenchmark|TracingState|AliasDb|DeepCopyMemoTable|\w*StorageContext|"
         r"PyTorchFile(Reader|Writer)|ScriptModuleSerializer|BenchmarkConfig|BenchmarkExecutionStats|"
         r"AggregationType|OperatorInfo|PRIVATE_OPS|Capsule|CallStack|DispatchKey\w*|"
         r"ExcludeDispatchKeyGuard|DisableTorchFunction\w*|Tag|BufferDict|ModuleDict|ParameterDict|"
         r"import_ir_module\w*|parse_ir|parse_schema|parse_type_comment|merge_type_from_type_comment|"
         r"unify_type_list|Future|Await\w*|RRef\w*|InferredType)",
         "TorchScript/JIT and dispatcher internals"),
        (r"\w*Storage|StorageBase|TypedStorage|UntypedStorage|is_storage|from_file",
         "typed storages (torch.Storage is torch.FloatStorage): gputorch's storage is the array itself "
         "(DLPack/numpy interchange instead)"),
        (r"(complex32|chalf|float8_\w+|float4_\w+|uint(1|2|3|4|5|6|7|16|32|64)|"
         r"int[1-7]|bits\w+|bit)",
         "dtypes gputorch does not have: complex32 (half-precision complex) and float8 "
         "(issue 13), sub-byte and wide unsigned integers (torch.bit is torch.uint1)"),
        (r"(batch_norm|native|group|layer|instance)_\w+|native_\w+|\w+_backward(_\w+)?|"
         r"batch_norm_(elemt|stats|gather_stats\w*|update_stats|backward_\w+)|norm_except_dim|segment_reduce|"
         r"convolution|constant_pad_nd|grid_sampler(_\dd)?|affine_grid_generator|conv_tbc|"
         r"slice_inverse|hash_tensor|empty_permuted|nonzero_static|\w+_copy",
         "ATen kernel entry points that PyTorch exposes for its own decompositions, not user API"),
        (r"(get|set|is)_autocast_\w+|autocast_(increment|decrement)_nesting|clear_autocast_cache|"
         r"is_autocast_\w+|autocast|GradScaler",
         "autocast and mixed precision: issue 13"),
        (r"compiled_with_cxx11_abi|has_(lapack|mkl|openmp|spectral)|prepare_multiprocessing_environment|"
         r"profiler_allow_cudagraph_cupti_lazy_reinit_cuda12|get_file_path|USE_GLOBAL_DEPS|"
         r"USE_RTLD_GLOBAL_WITH_LIBTORCH|thread_safe_generator|classproperty|AcceleratorError|"
         r"OutOfMemoryError|FatalError|get_device_module|is_distributed|CompleteArgumentSpec",
         "build and process-setup internals of the C++ library"),
        (r"AVG|SUM", "reduction-op constants of torch.distributed re-exported at the top level (issue 17)"),
        (r"jagged|conv_tbc", "the nested-tensor layout and a deprecated time-batch-channel convolution"),
        (r"symeig|eig|lstsq|solve|matrix_rank|triangular_solve|lu|chain_matmul|range|norm_except_dim",
         "removed or deprecated by torch itself (use torch.linalg)"),
    ],
    "torch.Tensor": [
        (r".*quant.*|q_\w+|int_repr|dequantize|qscheme", "quantization: out of scope"),
        (r"(to_)?sparse_(csr|csc|bsr|bsc)|(c?col|crow|row)_indices|ccol_indices|to_mkldnn|is_mkldnn|"
         r"\w*_sparse_\w*|sparse_resize\w*|sparse_mask|is_sparse_csr|coalesce|is_coalesced|indices|values|"
         r"to_sparse\w*|sparse_dim|dense_dim|_nnz",
         "compressed sparse layouts; the COO methods (indices, values, coalesce, sparse_dim, ...) live on "
         "gputorch's SparseCOOTensor, not on dense tensors"),
        (r"storage|untyped_storage|storage_type|is_shared|share_memory_|set_|is_set_to|pin_memory|"
         r"is_pinned|module_load|new\b",
         "typed storages and storage sharing across processes"),
        (r"is_nested|nested_\w+|to_padded_tensor|is_quantized|is_meta|is_mps|is_xpu|is_ipu|is_xla|is_maia|"
         r"is_mtia|is_vulkan|mps|xpu|ipu|cpu_\w+|itemsize|nbytes",
         "nested tensors and other device kinds"),
        (r"hash_tensor", "its result is uint64, one of the wide unsigned dtypes excluded above (torch itself "
                         "computes it only for some input dtypes)"),
        (r"index", "binds functorch's first-class dimensions (functorch.dim), which gputorch does not have"),
        (r"chalf", "casts to a dtype gputorch does not have: complex32 (issue 13)"),
        (r"(map_|map2_|apply_)|record_stream|register_hook_\w+|smm|sspaddmm|lu|lstsq|solve|symeig|eig|"
         r"matrix_rank|triangular_solve|\w+_copy",
         "deprecated in torch, CPU-only callbacks, or ATen kernel entry points"),
    ],
    "torch.nn": [
        (r"quantized|quantizable|qat|intrinsic|ao|common_types|factory_kwargs|grad|attention|modules|"
         r"parameter|init|functional|utils|parallel|backends|cpp|Container|NLLLoss2d|"
         r"LinearCrossEntropy\w*",
         "quantized modules, submodules and deprecated names (NLLLoss2d, Container)"),
    ],
    "torch.nn.functional": [
        (r"BroadcastingList\d|DType|GRID_SAMPLE_\w+|ScalingType|SwizzleType|Tensor|boolean_dispatch|"
         r"handle_torch_function|has_torch_function\w*|reproducibility_notes|sparse_support_notes|"
         r"tf32_notes|assert_int_or_pair|grad|upsample\w*|scaled_mm|scaled_grouped_mm|grouped_mm|"
         r"linear_cross_entropy|native_channel_shuffle_\w+|conv_tbc",
         "torch's internal helpers, documentation strings, deprecated upsample*, float8 scaled matmuls"),
    ],
    "torch.linalg": [
        (r"ldl_factor\w*|ldl_solve", "LDL factorisation: not written yet"),
        (r"common_notes", "a documentation string"),
    ],
    "torch.special": [
        (r"Tensor|common_args|multi_dim_common", "a type re-export and documentation strings"),
    ],
    "torch.fft": [
        (r"Tensor|common_args|factory_common_args", "a type re-export and documentation strings"),
    ],
    "torch.optim": [
        (r"swa_utils|Muon|swap_in_optimizer_params_and_state", "SWA utilities and Muon: not written yet"),
    ],
    "torch.utils.data": [
        (r"\w*DataPipe|DataChunk|datapipes|functional_datapipe|graph\w*|guaranteed_datapipes_determinism|"
         r"non_deterministic|runtime_validation\w*|argument_validation",
         "DataPipes: deprecated by torch"),
    ],
}

_COMPILED = {ns: [(re.compile(p), why) for p, why in rules] for ns, rules in EXCLUDED.items()}


def reason(namespace, name):
    """The reason ``name`` of ``namespace`` is left out, or None."""
    for ns in ("*", namespace):
        for pattern, why in _COMPILED.get(ns, ()):
            if pattern.fullmatch(name):
                return why
    return None
