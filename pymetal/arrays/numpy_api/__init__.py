"""NumPy's functions and ndarray methods on pymetal arrays, composed from the array library."""
