"""ndarray's methods that are about the bytes on the host, not computation: tofile, dump,
dumps, byteswap, setflags. They read the array's memory (after the device work on it) as
NumPy does, through x.numpy(); arrays/methods.py binds them on Array."""

from __future__ import annotations

import pickle

from ..array import Array, check_writeable
from ..construct import asarray

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def tofile(self: Array, fid: Any, sep: str = "", format: str = "%s") -> None:
    """Writes the elements to a file (a name or an open file), as ndarray.tofile: raw bytes in C
    order, or text with sep; read it back with pm.fromfile.

    Examples:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
        >>> pm.asarray([1, 2, 3], dtype=pm.int16).tofile(path)
        >>> pm.fromfile(path, dtype=pm.int16)
        Array([1, 2, 3], dtype=int16)
    """
    self.numpy().tofile(fid, sep=sep, format=format)


def dumps(self: Array) -> bytes:
    """The array's pickle, as ndarray.dumps (pickle.loads gives a pymetal array back).

    Examples:
        >>> import pickle
        >>> pickle.loads(pm.asarray([1.5, 2.0]).dumps())
        Array([1.5, 2. ], dtype=float32)
    """
    return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)


def dump(self: Array, file: Any) -> None:
    """Pickles the array to a file (a name or an open binary file), as ndarray.dump.

    Examples:
        >>> import io, pickle
        >>> f = io.BytesIO(); pm.arange(3).dump(f); _ = f.seek(0)
        >>> pickle.load(f)
        Array([0, 1, 2], dtype=int64)
    """
    if isinstance(file, (str, bytes)) or hasattr(file, "__fspath__"):
        with open(file, "wb") as f:
            pickle.dump(self, f, protocol=pickle.HIGHEST_PROTOCOL)
    else:
        pickle.dump(self, file, protocol=pickle.HIGHEST_PROTOCOL)


def byteswap(self: Array, inplace: bool = False) -> Array:
    """The elements with their bytes reversed (for data of the other endianness), as
    ndarray.byteswap; inplace=True swaps the array's own memory and returns it.

    Examples:
        >>> pm.asarray([1, 256], dtype=pm.int16).byteswap()
        Array([256,   1], dtype=int16)
    """
    swapped = asarray(self.numpy().byteswap())
    if not inplace:
        return swapped
    check_writeable(self)
    self[...] = swapped
    return self


def setflags(self: Array, write: bool | None = None, align: bool | None = None, uic: bool | None = None) -> None:
    """Sets the writeable flag, as ndarray.setflags(write=...) (x.flags.writeable = write).
    pymetal's memory is always aligned, so align=True is accepted; align=False and uic are refused.

    Examples:
        >>> x = pm.zeros(2)
        >>> x.setflags(write=False)
        >>> x.flags.writeable
        False
    """
    if align is False or uic is not None:
        raise ValueError("setflags: pymetal arrays are always aligned and have no UPDATEIFCOPY flag; "
                         "only write= can be set")
    if write is not None:
        self.flags.writeable = write
