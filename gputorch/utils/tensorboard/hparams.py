"""The three summaries of TensorBoard's HParams plugin for one trial (``SummaryWriter.add_hparams``).

TensorBoard's hparams dashboard reads, from one run directory, an *experiment* (the names and types
of the hyperparameters and the metric tags), a *session start* (this trial's values) and a *session
end* (its status). They are built here with the plugin's own protocol buffers and metadata helper;
the metric values themselves are ordinary scalars that the writer adds beside them.
"""
import time

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2
from tensorboard.plugins.hparams.summary_v2 import hparams_pb

__all__ = ["hparams_summaries"]


def _plain(name, value):
    """A hyperparameter's value as a Python bool, number or string (tensors and NumPy scalars of
    one element become numbers)."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu().numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        if value.size != 1:
            raise ValueError(f"hparam {name!r}: a tensor value must have one element, got shape {value.shape}")
        value = value.reshape(()).item()
    if not isinstance(value, (bool, int, float, str)):
        raise ValueError(f"hparam {name!r}: value should be one of int, float, str, bool, or torch.Tensor, "
                         f"got {type(value).__name__}")
    return value


def _data_type(value):
    if isinstance(value, bool):
        return api_pb2.DATA_TYPE_BOOL
    if isinstance(value, str):
        return api_pb2.DATA_TYPE_STRING
    return api_pb2.DATA_TYPE_FLOAT64


def _summary(tag, plugin_data):
    return Summary(value=[Summary.Value(tag=tag, tensor=metadata.NULL_TENSOR,
                                        metadata=metadata.create_summary_metadata(plugin_data))])


def hparams_summaries(hparam_dict, metric_dict, hparam_domain_discrete=None, start_time=None):
    """``(experiment, session_start, session_end)`` Summaries for ``hparam_dict`` (name -> value;
    ``None`` values are left out) and the metric tags of ``metric_dict``;
    ``hparam_domain_discrete`` (name -> list of allowed values) gives a hyperparameter its choices."""
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("hparam_dict and metric_dict should be dictionary.")
    domains = hparam_domain_discrete or {}
    values = {name: _plain(name, v) for name, v in hparam_dict.items() if v is not None}
    infos = []
    for name, value in values.items():
        info = api_pb2.HParamInfo(name=name, type=_data_type(value))
        if name in domains:
            choices = list(domains[name])
            if any(_data_type(c) != info.type for c in choices):
                raise TypeError(f"parameter: hparam_domain_discrete[{name!r}] should have the type of {value!r}")
            for choice in choices:
                entry = info.domain_discrete.values.add()
                if isinstance(choice, bool):
                    entry.bool_value = choice
                elif isinstance(choice, str):
                    entry.string_value = choice
                else:
                    entry.number_value = choice
        infos.append(info)
    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=tag)) for tag in metric_dict]
    experiment = _summary(metadata.EXPERIMENT_TAG, plugin_data_pb2.HParamsPluginData(
        experiment=api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics)))
    start = hparams_pb(values, trial_id="", start_time_secs=time.time() if start_time is None else start_time)
    end = _summary(metadata.SESSION_END_INFO_TAG, plugin_data_pb2.HParamsPluginData(
        session_end_info=plugin_data_pb2.SessionEndInfo(status=api_pb2.STATUS_SUCCESS)))
    return experiment, start, end
