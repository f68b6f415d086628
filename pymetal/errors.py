"""pymetal's exceptions.

Every failure reported by libPyMetal becomes a subclass of :class:`Error`.
Bad arguments detected in Python raise the built-in ``TypeError`` /
``ValueError`` instead. Where it helps, the classes also derive from the
matching built-in exception (``MemoryError``, ``LookupError``, ...) so generic
``except`` clauses keep working.
"""

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
    """Base class of every error pymetal raises itself."""


class LibraryError(Error, ImportError):
    """libPyMetal could not be found or loaded, or its ABI version differs."""


class CompileError(Error):
    """MSL source did not compile. ``diagnostics`` holds the compiler output."""

    def __init__(self, message, diagnostics=""):
        super().__init__(message)
        self.diagnostics = diagnostics


class NotFoundError(Error, LookupError):
    """No such function (in a library) or file."""


class FunctionNotFoundError(NotFoundError, AttributeError):
    """A library has no kernel function of the requested name."""


class KernelError(Error):
    """A kernel failed while executing (a command buffer reported an error)."""


class OutOfMemoryError(Error, MemoryError):
    """The device could not allocate memory."""


class InvalidArgumentError(Error, ValueError):
    """libPyMetal rejected an argument (bad size, index, handle...)."""


class UnsupportedError(Error, NotImplementedError):
    """The operation is not supported by this device or backend."""


# pm_status_code -> exception class
_BY_STATUS = {
    1: InvalidArgumentError,
    2: CompileError,
    3: NotFoundError,
    4: OutOfMemoryError,
    5: KernelError,
    6: UnsupportedError,
}


def error_for_status(status, message):
    """The exception for a libPyMetal status code and its pm_last_error()."""
    cls = _BY_STATUS.get(status, Error)
    if not message:
        message = "libPyMetal call failed with status %d" % status
    if cls is CompileError:
        return CompileError("MSL compilation failed:\n" + message, message)
    return cls(message)
