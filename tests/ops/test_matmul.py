"""ops/matmul: the order of matmul's checks for bool operands (shapes first, then the kernel PyTorch
would pick, named as PyTorch names it)."""
import pytest

import gputorch


@pytest.mark.parametrize("a_shape,b_shape,message", [
    ((3, 4), (5, 4), "mat1 and mat2 shapes cannot be multiplied \\(3x4 and 5x4\\)"),
    ((3, 4), (4, 5), "\"addmm_impl_cpu_\" not implemented for 'Bool'"),
    ((4,), (4,), "\"dot\" not implemented for 'Bool'"),
    ((2, 3, 4), (2, 4, 5), "\"bmm\" not implemented for 'Bool'"),
    ((3, 4), (4,), "\"addmv_impl_cpu\" not implemented for 'Bool'"),
])
def test_bool_products_check_shapes_then_name_the_kernel(a_shape, b_shape, message, device):
    a = gputorch.zeros(a_shape, dtype=gputorch.bool, device=device)
    b = gputorch.zeros(b_shape, dtype=gputorch.bool, device=device)
    error = RuntimeError if "shapes" in message else NotImplementedError
    with pytest.raises(error, match=message):
        a @ b
