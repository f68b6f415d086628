"""Runs every example and prints a short report (the README's main job)."""
import pathlib
import sys
import time
import traceback

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import pymetal as pm  # noqa: E402

EXAMPLES = ["square_cube", "add2", "log", "hello_abc", "compute_throughput", "julia", "metalpy_arrays",
            "sklearn_pca_ridge", "dask_stats"]


def main() -> int:
    device = pm.device()
    print(f"pymetal on {device.name} (backend: {device.backend})\n")
    report, failed = [], 0
    for name in EXAMPLES:
        start = time.perf_counter()
        try:
            summary = __import__(name).main()
            report.append(f"  ok    {summary}  [{time.perf_counter() - start:.2f} s]")
        except Exception:
            failed += 1
            traceback.print_exc()
            report.append(f"  FAIL  {name}")
    print("\nReport:\n" + "\n".join(report))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
