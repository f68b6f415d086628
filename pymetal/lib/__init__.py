"""NumPy's ``numpy.lib`` pieces for pymetal arrays: ``pm.lib.stride_tricks``."""

from . import stride_tricks  # noqa: F401
