"""The engine over libPyMetal: devices, buffers, libraries, kernel calls (imports nothing from arrays/)."""
