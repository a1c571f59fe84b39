"""Automatic differentiation: the graph, the engine, grad modes and custom Functions."""
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import gradcheck, gradgradcheck
from .variable import Variable
from . import anomaly_mode, engine, function, grad_mode, graph  # noqa: F401

__all__ = ["Variable", "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled", "gradcheck", "gradgradcheck", "Function", "FunctionCtx",
           "once_differentiable"]
