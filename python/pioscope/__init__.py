"""pioscope for Python: trace stores (and Darshan logs) as pandas or Polars data frames, the
report's profile as data, and notebook plots. Guide: docs/PYTHON.md.

    import pioscope
    trace = pioscope.open("run1")            # a trace store, or a *.darshan log
    ev = trace.events(ranks=range(0, 4))     # with path, parent_func, parent_layer
    trace.profile().findings
    trace.plot_timeline(ranks=range(0, 4))
"""
from .binary import PioscopeError
from .colours import Colours
from .profile import Profile
from .trace import Trace, open

__version__ = "0.1.0"
__all__ = ["open", "Trace", "Profile", "Colours", "PioscopeError"]
