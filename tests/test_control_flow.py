"""torch.cond (gputorch/_control_flow.py): the branch the predicate picks, with the operands."""
import pytest

import gputorch


def test_cond_runs_the_chosen_branch():
    x = gputorch.tensor([1.0, 2.0], requires_grad=True)
    out = gputorch.cond(x.sum() > 0, lambda a: a * 2, lambda a: a - 1, (x,))
    assert out.tolist() == [2.0, 4.0]
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    assert gputorch.cond(False, lambda: 1, lambda: 2) == 2
    assert gputorch.cond(0, lambda a: a + 1, lambda a: a - 1, [x]).tolist() == [0.0, 1.0]
    with pytest.raises(RuntimeError, match="single-element tensor"):
        gputorch.cond(gputorch.tensor([True, False]), lambda: 1, lambda: 2)
