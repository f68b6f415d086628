"""DLPack on pymetal arrays: ``__dlpack__``, ``__dlpack_device__`` and ``from_dlpack``.

pymetal memory is shared memory the CPU addresses directly (a Metal buffer in
shared storage mode, or MetalCPU's memory on Linux), so arrays are exported as
DLPack CPU tensors (``kDLCPU``, device 0): the pointer in the DLTensor is the
buffer's host address, which is what a CPU consumer needs. ``kDLMetal`` would
ask the consumer for an MTLBuffer handle instead, which NumPy and PyTorch's CPU
tensors cannot use.

Export goes through NumPy's own DLPack implementation on the zero-copy view of
the array (``Array.numpy()``, which first waits for pending work): the capsule
holds that view, whose ``.base`` chain holds the pymetal Buffer, so the memory
lives as long as any consumer holds it. Unversioned or versioned (DLPack 1.x)
capsules follow ``max_version`` as NumPy implements it. bfloat16 cannot be
exported this way (NumPy's DLPack knows no bfloat16): that raises BufferError.

Import (``pm.from_dlpack``) lets NumPy read the capsule and then shares the
memory when pymetal can wrap it (C-contiguous, writeable, page-aligned: the
rule of no-copy Metal buffers) and copies otherwise; ``copy=False`` then
raises BufferError. A wrapped buffer keeps the producer's tensor alive.
"""

import numpy as np

from .array import Array, _device, _from_numpy

_KDLCPU = 1


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    if stream is not None:
        raise ValueError("__dlpack__: pymetal exports CPU-addressable memory; stream must be None, not %r"
                         % (stream,))
    if dl_device is not None and tuple(dl_device) != (_KDLCPU, 0):
        raise BufferError("__dlpack__: pymetal arrays can be exported to the CPU (device (1, 0)) only, not %r"
                          % (dl_device,))
    a = self.numpy()  # waits for the work that produces the array; a view, no copy
    kwargs = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy))
              if v is not None}
    try:
        return a.__dlpack__(**kwargs)
    except BufferError as e:
        raise BufferError("__dlpack__: %s arrays cannot be exported through DLPack here (%s)" % (a.dtype, e)) \
            from None


def _dlpack_device(self):
    return (_KDLCPU, 0)


Array.__dlpack__ = _dlpack
Array.__dlpack_device__ = _dlpack_device


def from_dlpack(x, /, *, device=None, copy=None):
    """A pymetal array of a DLPack producer's data (NumPy arrays, PyTorch CPU tensors, ...).

    Shares the producer's memory when it is C-contiguous, writeable and page-aligned;
    otherwise copies (copy=False then raises BufferError; copy=True always copies).
    """
    dev = _device(device)
    if isinstance(x, Array):
        return x.copy() if copy else x
    if not hasattr(x, "__dlpack__"):
        raise TypeError("from_dlpack: %s does not implement __dlpack__" % type(x).__name__)
    # A NumPy array is used as itself: pymetal then recognises a view of its own memory.
    a = x if isinstance(x, np.ndarray) else np.from_dlpack(x)
    if a.size == 0:
        copy = copy or None  # nothing to share: an empty array is never a copy that matters
    try:
        return _from_numpy(a, dev, copy)
    except ValueError as e:
        if copy is False:
            raise BufferError("from_dlpack(copy=False): %s" % e) from None
        raise
