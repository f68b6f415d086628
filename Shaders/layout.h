// How generic kernels find their elements.
//
// Layouts (MLX's naming): v = contiguous, s = one scalar, g = general strided
// n-d. The host collapses dimensions that are contiguous in every operand
// first, so most g dispatches have 1-3 dimensions. A g kernel runs on a 3-D
// grid: x walks the innermost dimension, y the next, and z the product of the
// remaining ones (decomposed with one division per dimension).
#pragma once
#include <metal_stdlib>
using namespace metal;

#define PM_MAX_DIMS 8
#define PM_MAX_OPERANDS 4

// Shape and element strides of up to 4 operands (inputs..., output), dims
// innermost last, ndim >= 2 (the host pads with leading 1s).
struct Strided {
    int ndim;
    uint shape[PM_MAX_DIMS];
    long strides[PM_MAX_OPERANDS][PM_MAX_DIMS];
};

METAL_FUNC long strided_offset(uint3 pos, constant Strided& p, int k) {
    int nd = p.ndim;
    long off = long(pos.x) * p.strides[k][nd - 1] + long(pos.y) * p.strides[k][nd - 2];
    uint z = pos.z;
    for (int d = nd - 3; d >= 0; --d) {
        off += long(z % p.shape[d]) * p.strides[k][d];
        z /= p.shape[d];
    }
    return off;
}
