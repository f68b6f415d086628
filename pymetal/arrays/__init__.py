"""The array library over runtime/: Array, its operations and their kernels (see docs/architecture.md)."""
