"""float32 matmul precision (being written)."""
_PRECISION = "highest"


def get_float32_matmul_precision():
    return _PRECISION


def set_float32_matmul_precision(precision):
    global _PRECISION
    _PRECISION = precision
