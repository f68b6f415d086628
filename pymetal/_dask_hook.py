"""Dask's ``dask.sizeof`` entry point (run while ``import dask`` loads dask.sizeof): registers
lazily, so that importing Dask imports nothing of pymetal's and pymetal.dask (which imports
dask.array) loads the first time Dask sizes a pymetal array. Tokenizing one loads it too
(``Array.__dask_tokenize__``; ``da.from_array`` tokenizes its input), so no ``import pymetal.dask``
is needed in user code or on workers."""


def register(sizeof):
    def load():
        import pymetal.dask  # noqa: F401  (registers everything, sizeof included)

    sizeof.register_lazy("pymetal")(load)  # (dask.tokenize cannot be imported yet: a cycle)
