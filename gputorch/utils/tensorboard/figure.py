"""Matplotlib figures as images (``SummaryWriter.add_figure``), drawn by matplotlib's Agg canvas."""
import numpy as np

__all__ = ["figure_to_hwc"]


def figure_to_hwc(figure, close=True):
    """The pixels of a matplotlib ``figure`` as an HWC uint8 RGB array; ``close`` closes it after."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("SummaryWriter.add_figure needs matplotlib: pip install 'gputorch[tensorboard]'") from e
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())[..., :3].copy()
    if close:
        plt.close(figure)
    return pixels
