"""NumPy's ufunc keywords beyond out= on pymetal's elementwise functions: ``where=`` (compute
only where True; with out=, out keeps its values elsewhere), ``dtype=`` (the inputs converted
to it first, as NumPy's computation dtype), and ``casting`` / ``order`` / ``subok`` (checked,
pymetal's results are C-ordered arrays). elementwise.py's functions come here only when such a
keyword is given, so their plain calls stay as fast.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import elementwise as _ew
from ... import dtypes as _dt
from ..array import Array, check_writeable

_CASTING = ("no", "equiv", "safe", "same_kind", "unsafe")


def call(name: str, args: tuple, out: Array | None, kwargs: dict) -> Array:
    """elementwise function `name` of args with NumPy's keywords `kwargs`."""
    kw = dict(kwargs)
    where = kw.pop("where", True)
    dtype = kw.pop("dtype", None)
    casting = kw.pop("casting", "same_kind")
    order = kw.pop("order", "K")
    kw.pop("subok", None)
    if kw:
        raise TypeError("%s() got an unexpected keyword argument %r" % (name, next(iter(kw))))
    if casting not in _CASTING:
        raise ValueError("casting must be one of %s, not %r" % (", ".join(_CASTING), casting))
    if order not in ("K", "A", "C", "F", None):
        raise ValueError("order must be one of 'C', 'F', 'A' or 'K', not %r" % (order,))
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    fn = _ew.FUNCTIONS[name]
    if dtype is not None:  # NumPy's computation dtype: the inputs converted to it, by the casting rule
        dt = _dt.check_dtype(dtype)
        arrays = [_ew.as_array(a) for a in args]
        for i, (a, v) in enumerate(zip(args, arrays)):
            if isinstance(a, (Array, np.ndarray)) and not np.can_cast(v.dtype, dt, casting):
                raise TypeError("Cannot cast ufunc %r input %d from %s to %s with casting rule %r"
                                % (name, i, v.dtype, dt, casting))
        args = tuple(_ew.astype(v, dt) for v in arrays)
    if where is True:
        return fn(*args, out=out)
    mask = _ew.as_array(where)
    res = fn(*args)
    if out is None:
        return res  # NumPy leaves the elements where False uninitialised: here, computed anyway
    if not isinstance(out, Array):
        raise TypeError("out= must be a pymetal Array, not %s" % type(out).__name__)
    check_writeable(out)
    _ew.copy_into(_ew.where(mask, res, out), out)
    return out
