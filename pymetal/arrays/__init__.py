"""The array library over runtime/: Array, its operations and their kernels (see docs/architecture.md)."""

from . import methods  # noqa: F401  (binds Array's operators and methods: any use sees the complete class)
