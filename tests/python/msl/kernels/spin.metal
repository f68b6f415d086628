// The kernel the fault, fork and timeout tests share (tests/python/runtime/test_faults*.py, test_fork.py):
// runs until a[0] != 0 or the kernel time limit stops it (the writes keep the loop from being removed).
kernel void spin(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    while (a[0] == 0) { a[i + 1] += 1; }
}
