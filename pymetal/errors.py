"""pymetal's exceptions.

Every failure reported by libPyMetal becomes a subclass of :class:`Error`.
Bad arguments detected in Python raise the built-in ``TypeError`` /
``ValueError`` instead. Where it helps, the classes also derive from the
matching built-in exception (``MemoryError``, ``LookupError``, ...) so generic
``except`` clauses keep working.
"""

from __future__ import annotations

__all__ = [
    "Error",
    "LibraryError",
    "CompileError",
    "NotFoundError",
    "FunctionNotFoundError",
    "KernelError",
    "OutOfMemoryError",
    "InvalidArgumentError",
    "UnsupportedError",
]


class Error(Exception):
    """Base class of every error pymetal raises itself.

    Examples:
        >>> issubclass(pm.CompileError, pm.Error), issubclass(pm.Error, Exception)
        (True, True)
    """


class LibraryError(Error, ImportError):
    """libPyMetal could not be found or loaded, or its ABI version differs.

    Also an ImportError.

    Examples:
        >>> issubclass(pm.LibraryError, ImportError)
        True
    """


class CompileError(Error):
    """MSL source did not compile. ``diagnostics`` holds the compiler output.

    Examples:
        >>> try:
        ...     pm.compile("kernel void k(device float* x [[buffer(0)]]) { x[0] = y; }")
        ... except pm.CompileError as e:
        ...     print("undeclared identifier 'y'" in e.diagnostics)
        True
    """

    def __init__(self, message: str, diagnostics: str = "") -> None:
        super().__init__(message)
        self.diagnostics = diagnostics


class NotFoundError(Error, LookupError):
    """No such function (in a library) or file.

    Also a LookupError.

    Examples:
        >>> issubclass(pm.NotFoundError, LookupError)
        True
    """


class FunctionNotFoundError(NotFoundError, AttributeError):
    """A library has no kernel function of the requested name.

    Also an AttributeError (``lib.name``) and a NotFoundError.

    Examples:
        >>> try:
        ...     pm.shaders().function("no_such_kernel")
        ... except pm.FunctionNotFoundError as e:
        ...     print(str(e).split(";")[0])
        no kernel function 'no_such_kernel' in pymetal's shader library
    """


class KernelError(Error):
    """A kernel failed while executing (a command buffer reported an error).

    Raised by the synchronisation that finds the failure (reading an array, pm.synchronize()).

    Examples:
        >>> issubclass(pm.KernelError, pm.Error)
        True
    """


class OutOfMemoryError(Error, MemoryError):
    """The device could not allocate memory.

    Also a MemoryError.

    Examples:
        >>> issubclass(pm.OutOfMemoryError, MemoryError)
        True
    """


class InvalidArgumentError(Error, ValueError):
    """libPyMetal rejected an argument (bad size, index, handle...).

    Also a ValueError.

    Examples:
        >>> issubclass(pm.InvalidArgumentError, ValueError)
        True
    """


class UnsupportedError(Error, NotImplementedError):
    """The operation is not supported by this device or backend.

    Also a NotImplementedError.

    Examples:
        >>> issubclass(pm.UnsupportedError, NotImplementedError)
        True
    """


# pm_status_code -> exception class
_BY_STATUS = {
    1: InvalidArgumentError,
    2: CompileError,
    3: NotFoundError,
    4: OutOfMemoryError,
    5: KernelError,
    6: UnsupportedError,
}


def error_for_status(status: int, message: str) -> Error:
    """The exception for a libPyMetal status code and its pm_last_error()."""
    cls = _BY_STATUS.get(status, Error)
    if not message:
        message = "libPyMetal call failed with status %d" % status
    if cls is CompileError:
        return CompileError("MSL compilation failed:\n" + message, message)
    return cls(message)
