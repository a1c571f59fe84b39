"""The global names PyTorch's checkpoints refer to, and their gputorch counterparts.

A PyTorch pickle names ``torch.FloatStorage``, ``torch._utils._rebuild_tensor_v2``, ``torch.float32``
and so on. Writing, :class:`GlobalRef` stands for such a name without importing torch; reading,
:data:`STORAGE_DTYPES` / :data:`DTYPE_NAMES` translate the names to gputorch dtypes.
"""
from .. import _dtype

# PyTorch's legacy typed-storage class for each dtype gputorch has.
STORAGE_CLASS = {
    _dtype.bool: "BoolStorage",
    _dtype.uint8: "ByteStorage",
    _dtype.int8: "CharStorage",
    _dtype.int16: "ShortStorage",
    _dtype.int32: "IntStorage",
    _dtype.int64: "LongStorage",
    _dtype.float16: "HalfStorage",
    _dtype.bfloat16: "BFloat16Storage",
    _dtype.float32: "FloatStorage",
    _dtype.float64: "DoubleStorage",
    _dtype.complex64: "ComplexFloatStorage",
    _dtype.complex128: "ComplexDoubleStorage",
}
STORAGE_DTYPES = {name: dt for dt, name in STORAGE_CLASS.items()}

# Storage classes and dtypes that PyTorch has and gputorch does not.
UNSUPPORTED_STORAGES = {
    "QInt8Storage": "qint8", "QUInt8Storage": "quint8", "QInt32Storage": "qint32",
    "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
}
DTYPE_NAMES = {dt.name: dt for dt in STORAGE_CLASS}
UNSUPPORTED_DTYPES = frozenset({
    "complex32", "chalf", "qint8", "quint8",
    "qint32", "quint4x2", "quint2x4", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
    "float8_e8m0fnu", "float4_e2m1fn_x2", "uint16", "uint32", "uint64", "bits8", "bits16", "bits1x8",
    "bits2x4", "bits4x2", "bits16", "int1", "int2", "int3", "int4", "int5", "int6", "int7", "uint1", "uint2",
    "uint3", "uint4", "uint5", "uint6", "uint7",
})
# PyTorch's aliases of the dtypes gputorch has (torch.float, torch.long, ...).
DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
                 "short": "int16", "cfloat": "complex64", "cdouble": "complex128"}

# File records PyTorch's zip writer adds beside data.pkl and data/<key>.
ZIP_FORMAT_VERSION = b"1"      # <archive>/.format_version
ZIP_ALIGNMENT = 64             # <archive>/.storage_alignment: data records start at multiples of it
ZIP_VERSION = b"3\n"           # <archive>/version


class GlobalRef:
    """A global ``module.name`` to write into a pickle (``GLOBAL`` opcode) without importing it.

    Instances are interned, so the pickle memo writes each name once."""
    __slots__ = ("module", "name")
    _interned = {}

    def __new__(cls, module, name):
        key = (module, name)
        ref = cls._interned.get(key)
        if ref is None:
            ref = object.__new__(cls)
            ref.module, ref.name = module, name
            cls._interned[key] = ref
        return ref

    def __call__(self, *args):     # pickle requires a reduce callable to be callable
        raise TypeError(f"{self.module}.{self.name} is only a name written into a checkpoint")

    def __repr__(self):
        return f"GlobalRef({self.module}.{self.name})"


REBUILD_TENSOR_V2 = GlobalRef("torch._utils", "_rebuild_tensor_v2")
REBUILD_META_TENSOR = GlobalRef("torch._utils", "_rebuild_meta_tensor_no_storage")
REBUILD_PARAMETER = GlobalRef("torch._utils", "_rebuild_parameter")
REBUILD_PARAMETER_WITH_STATE = GlobalRef("torch._utils", "_rebuild_parameter_with_state")
REBUILD_FROM_TYPE_V2 = GlobalRef("torch._tensor", "_rebuild_from_type_v2")
TORCH_TENSOR = GlobalRef("torch", "Tensor")
TORCH_DEVICE = GlobalRef("torch", "device")
TORCH_SIZE = GlobalRef("torch", "Size")


def storage_class_ref(dtype):
    """``torch.FloatStorage``-style reference for a gputorch dtype."""
    return GlobalRef("torch", STORAGE_CLASS[dtype])


def dtype_ref(dtype):
    """``torch.float32``-style reference for a gputorch dtype."""
    return GlobalRef("torch", dtype.name)
