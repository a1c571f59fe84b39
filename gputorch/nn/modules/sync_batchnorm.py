"""``SyncBatchNorm``: batch normalization whose statistics span every process of a group."""
from ...autograd.grad_mode import no_grad
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over ``(N, C, *)`` with the mean and variance of the whole distributed
    batch (all ranks of ``process_group``) in training, so that data-parallel training equals
    single-process training on the concatenated batch. The statistics come from two differentiable
    all-reduces (the sums, then the squared deviations from the global mean), so their gradients
    flow across processes as well. Without an initialised process group, or in eval mode, it is
    ``BatchNorm``. Unlike PyTorch's, it also runs on CPU tensors (gputorch's engine is MPI).

    Args:
        num_features, eps, momentum, affine, track_running_stats: as ``BatchNorm2d``.
        process_group: the group whose batch is normalised together (default: the default group).
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        from ... import distributed as dist
        self._check_input_dim(input)
        if not (self.training and dist.is_initialized() and dist.get_world_size(self.process_group) > 1):
            return super().forward(input)
        from ...distributed.nn.functional import all_reduce
        dims = [0] + list(range(2, input.dim()))
        local_count = input.numel() // input.shape[1]
        shape = [1, input.shape[1]] + [1] * (input.dim() - 2)
        sums = all_reduce(input.sum(dims), group=self.process_group)
        count = local_count * dist.get_world_size(self.process_group)
        mean = sums / count
        centred = input - mean.reshape(shape)
        var = all_reduce((centred * centred).sum(dims), group=self.process_group) / count
        out = centred / (var + self.eps).sqrt().reshape(shape)
        if self.affine:
            out = out * self.weight.reshape(shape) + self.bias.reshape(shape)
        if self.track_running_stats:
            self._update_running_stats(mean.detach(), var.detach(), count)
        return out

    def _update_running_stats(self, mean, var, count):
        with no_grad():
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
            self.running_mean.mul_(1 - factor).add_(mean, alpha=factor)
            self.running_var.mul_(1 - factor).add_(var * (count / max(count - 1, 1)), alpha=factor)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm layer replaced by a SyncBatchNorm holding the same
        parameters and statistics (the module itself when it is one)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                module.track_running_stats, process_group)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
