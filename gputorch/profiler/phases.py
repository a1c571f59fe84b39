"""Training phases, as the framework itself reports them.

``forward``    from the first module call after a backward or optimizer step until the next
               backward starts (the loss computed outside modules belongs to it)
``backward``   while the autograd engine runs (``loss.backward()``, ``autograd.grad``)
``optimizer``  while an optimizer's ``step()`` runs
``other``      anything else (data loading, logging, between steps)

Steps are counted from ``optimizer.step()`` calls: step ``k`` is what happens after ``k``
completed steps.
"""

__all__ = ["PHASES", "FORWARD", "BACKWARD", "OPTIMIZER", "OTHER_PHASE"]

FORWARD = "forward"
BACKWARD = "backward"
OPTIMIZER = "optimizer"
OTHER_PHASE = "other"

PHASES = (FORWARD, BACKWARD, OPTIMIZER, OTHER_PHASE)
