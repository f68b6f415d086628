"""Real-world MSL from projects other than MLX, candle and ggml (scripts/realmsl_others.py): Apple's
sample code and tutorials, PyTorch's MPS kernels, tinygrad's renderer, physics, image-filter and
crypto repositories. The idioms they use that pymetal refused, each in our own minimal kernel,
compiled, run and checked against NumPy:

- `#include <simd/simd.h>` and its names in headers shared with the host (vector_float2, simd::float4,
  matrix_float4x4, simd_uint2), `using namespace simd;` and simd::length after it;
- buffer indices named by enumerators (`[[buffer(AAPLBufferIndexVertices)]]`), also NS_ENUM as Apple's
  headers expand it for Metal (`enum E : metal::int32_t E; enum E : metal::int32_t {...}`);
- `#import "header.h"` (read once);
- a vector direct-initialised at namespace scope, `constant half3 luma(0.299, 0.587, 0.114);`;
- files that mix graphics with compute: vertex and fragment functions, kernels that bind textures,
  stage attributes on struct members, helpers taking textures: the compute kernels run, the others are
  listed and raise a clear error when dispatched;
- <metal_texture>, tessellation factor structs written by a compute kernel.
"""

import numpy as np
import pytest

import pymetal as pm

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"


@pytest.fixture
def rng():
    return np.random.default_rng(2611)


# ---------------------------------------------------------------------------
# <simd/simd.h>: the shared-header names are Metal's own types (one layout on host and device)
# ---------------------------------------------------------------------------

SIMD_SRC = r"""
#include <metal_stdlib>
#include <simd/simd.h>
using namespace metal;
typedef struct {
    matrix_float4x4 transform;
    simd::float4 offset;
    vector_float2 xy;
    simd_uint2 size;
} Uniforms;
kernel void apply(device const Uniforms& u [[buffer(0)]], device const simd_float4* in [[buffer(1)]],
                  device vector_float4* out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    simd::float4 v = simd::float4(in[i].xy + u.xy, float(u.size.x), float(u.size.y));
    out[i] = u.transform * v + u.offset + simd::length(in[i]);
}
"""

UNIFORMS = np.dtype([("transform", "<f4", (4, 4)), ("offset", "<f4", 4), ("xy", "<f4", 2), ("size", "<u4", 2)],
                    align=True)


@pytest.mark.parametrize("n", [1, 7, 33])
def test_simd_header_shared_struct(rng, n):
    lib = pm.compile(SIMD_SRC)
    u = np.zeros(1, UNIFORMS)
    u["transform"] = rng.standard_normal((4, 4))  # column-major in Metal: transform[c] is column c
    u["offset"], u["xy"], u["size"] = rng.standard_normal(4), rng.standard_normal(2), (3, 5)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    out = np.zeros_like(x)
    lib.apply(u, x, out, grid=n)
    v = np.concatenate([x[:, :2] + u["xy"][0], np.broadcast_to([3.0, 5.0], (n, 2))], axis=1).astype(np.float64)
    want = v @ u["transform"][0].astype(np.float64) + u["offset"][0] + np.linalg.norm(x, axis=1, keepdims=True)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    assert UNIFORMS.itemsize == 96  # float4x4 64, float4 16, float2 8 + uint2 8


def test_simd_namespace_from_the_include():
    # `using namespace simd;` and simd::normalize after <simd/simd.h> (Apple's samples include it through
    # their shared headers); <metal_stdlib> alone does not declare namespace simd, so a kernel may be
    # named `simd` (test_kernel_log.py)
    lib = pm.compile(HEADER + r"""
#include <simd/simd.h>
using namespace simd;
kernel void unit(device float2* v [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    v[i] = simd::normalize(v[i]) * length(float2(3, 4));
}
""")
    v = np.array([[3, 4], [0, 2], [-1, 1]], np.float32)
    lib.unit(v, grid=3)
    want = np.array([[3, 4], [0, 2], [-1, 1]], np.float64)
    np.testing.assert_allclose(v, 5 * want / np.linalg.norm(want, axis=1, keepdims=True), rtol=1e-6)


# ---------------------------------------------------------------------------
# Buffer indices named by enumerators
# ---------------------------------------------------------------------------

ENUM_SRC = HEADER + r"""
#define NS_ENUM(_type, _name) enum _name : _type _name; enum _name : _type
#define NSInteger metal::int32_t
typedef NS_ENUM(NSInteger, BufferIndex) {
    BufferIndexOut = 0,
    BufferIndexScale,             // 1: the previous one's plus one
    BufferIndexIn = BufferIndexScale + 2,
    BufferIndexBias = 2,
};
enum class Extra : int { First = 5, Second };
kernel void affine(device const float* x [[buffer(BufferIndexIn)]],
                   device float* y [[buffer(BufferIndexOut)]],
                   constant float& bias [[buffer(BufferIndexBias)]],
                   constant float& scale [[buffer(BufferIndexScale)]],
                   constant int& tag [[buffer(Extra::Second)]],
                   uint i [[thread_position_in_grid]]) {
    y[i] = x[i] * scale + bias + tag;
}
"""


@pytest.mark.parametrize("n", [1, 6, 100])
def test_buffer_indices_from_enumerators(rng, n):
    lib = pm.compile(ENUM_SRC)
    x = rng.standard_normal(n).astype(np.float32)
    y = np.zeros_like(x)
    # positional arguments bind in order of [[buffer(n)]]: Out 0, Scale 1, Bias 2, In 3, Extra::Second 6
    lib.affine(y, np.float32(3), np.float32(0.5), x, np.int32(7), grid=n)
    np.testing.assert_allclose(y, x * np.float32(3) + np.float32(0.5) + 7, rtol=1e-6)


def test_unknown_buffer_index_name_is_a_clear_error():
    with pytest.raises(pm.CompileError, match=r"\[\[buffer\(n\)\]\] needs an index from 0 to 30"):
        pm.compile(HEADER + "kernel void k(device float* x [[buffer(NotAnEnumerator)]]) { x[0] = 1; }")


# ---------------------------------------------------------------------------
# #import (read once) and namespace-scope direct initialisation of vectors
# ---------------------------------------------------------------------------

def test_import_reads_a_header_once(tmp_path):
    (tmp_path / "Shared.h").write_text("typedef struct { float gain; } Params;\nconstant float3 luma(0.25, 0.5, 0.25);\n")
    src = HEADER + '#import "Shared.h"\n#import "Shared.h"\n' + r"""
kernel void gray(device const float3* rgb [[buffer(0)]], device float* out [[buffer(1)]],
                 constant Params& p [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    out[i] = dot(rgb[i], luma) * p.gain;
}
"""
    lib = pm.compile(src, include_dirs=[str(tmp_path)])
    rgb = np.arange(12, dtype=np.float32).reshape(3, 4)  # float3 is 16 bytes in a buffer
    out = np.zeros(3, np.float32)
    lib.gray(rgb, out, np.array([2], np.float32), grid=3)  # Params, a struct of one float
    np.testing.assert_allclose(out, (rgb[:, :3] @ [0.25, 0.5, 0.25]) * 2)


def test_vector_direct_initialisation_at_namespace_scope():
    lib = pm.compile(r"""#include <metal_stdlib>
constant half3 first(0.299, 0.587, 0.114);
using namespace metal;
constant float4 weights(1, -2.5, 3e-1, 4);
namespace tables { constant int2 offsets(-1, 2); }
constant float4 combined = float4(first.x, 0, 0, 0);
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    out[i] = weights[i] + float(first[i % 3]) + tables::offsets[i % 2] + combined.x;
}
""")
    out = np.zeros(4, np.float32)
    lib.k(out, grid=4)
    first = np.array([0.299, 0.587, 0.114], np.float16).astype(np.float64)
    want = np.array([1, -2.5, 0.3, 4]) + first[[0, 1, 2, 0]] + np.array([-1, 2, -1, 2]) + first[0]
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_namespace_scope_function_declaration_is_left():
    # `float4 f(float4 x);` at namespace scope declares a function: not a vector built from values
    lib = pm.compile(HEADER + r"""
float4 twice(float4 x);
kernel void k(device float4* v [[buffer(0)]], uint i [[thread_position_in_grid]]) { v[i] = twice(v[i]); }
float4 twice(float4 x) { return x * 2; }
""")
    v = np.ones((2, 4), np.float32)
    lib.k(v, grid=2)
    np.testing.assert_array_equal(v, 2)


# ---------------------------------------------------------------------------
# Files that mix graphics with compute
# ---------------------------------------------------------------------------

MIXED_SRC = r"""
#include <metal_stdlib>
#include <simd/simd.h>
using namespace metal;
typedef enum { VertexInputIndexVertices = 0, VertexInputIndexViewport = 1 } VertexInputIndex;
struct VertexIn { float2 position [[attribute(0)]]; float4 color [[attribute(1)]]; };
struct RasterizerData {
    float4 position [[position]];
    float4 color [[user(locn0)]];
    float size [[point_size]];
    half4 flat_color [[flat]];
};
constant bool has_uv [[function_constant(0)]];
struct Varyings { float4 position [[position]]; float2 uv [[function_constant(has_uv)]]; };
vertex RasterizerData vertexShader(uint vertexID [[vertex_id]],
                                   constant VertexIn* vertices [[buffer(VertexInputIndexVertices)]],
                                   constant vector_uint2* viewport [[buffer(VertexInputIndexViewport)]]);
vertex RasterizerData vertexShader(uint vertexID [[vertex_id]],
                                   constant VertexIn* vertices [[buffer(VertexInputIndexVertices)]],
                                   constant vector_uint2* viewport [[buffer(VertexInputIndexViewport)]]) {
    RasterizerData out;
    out.position = float4(vertices[vertexID].position / float2(*viewport), 0, 1);
    out.color = vertices[vertexID].color;
    return out;
}
fragment float4 fragmentShader(RasterizerData in [[stage_in]], texture2d<half> tex [[texture(0)]]) {
    constexpr sampler s(mag_filter::linear, min_filter::linear, address::clamp_to_edge);
    return float4(tex.sample(s, in.position.xy)) * in.color;
}
[[fragment]] half4 plain(Varyings in [[stage_in]]) { return half4(1.0h); }
static half3 blur(texture2d<half, access::read> in, uint2 gid) {
    half3 sum(0.0h);
    for (int d = -1; d <= 1; d++) sum += in.read(uint2(int2(gid) + int2(d, 0))).rgb;
    return sum / 3;
}
kernel void blurKernel(texture2d<half, access::read> in [[texture(0)]],
                       texture2d<half, access::write> out [[texture(1)]], uint2 gid [[thread_position_in_grid]]) {
    out.write(half4(blur(in, gid), 1.0h), gid);
}
kernel void implicitTexture(texture2d<float, access::write> out, uint2 gid [[thread_position_in_grid]]) {
    out.write(float4(1), gid);
}
kernel void stageKernel(VertexIn v [[stage_in]], device float4* out [[buffer(0)]]) { out[0] = v.color; }
kernel void scale(device float* x [[buffer(0)]], constant float& k [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    x[i] *= k;
}
"""

REFUSED = {"vertexShader": "a vertex function", "fragmentShader": "a fragment function",
           "plain": "a fragment function", "blurKernel": "a kernel with a texture2d parameter",
           "implicitTexture": "a kernel with a texture2d parameter",
           "stageKernel": r"a kernel with a \[\[stage_in\]\] parameter"}


def test_mixed_file_compute_kernel_runs(rng):
    lib = pm.compile(MIXED_SRC)
    assert sorted(lib.functions) == sorted(list(REFUSED) + ["scale"])
    for n in (1, 13):
        x = rng.standard_normal(n).astype(np.float32)
        want = x * np.float32(2.5)
        lib.scale(x, np.float32(2.5), grid=n)
        np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_mixed_file_graphics_entry_points_fail_clearly_when_dispatched(name):
    lib = pm.compile(MIXED_SRC)
    fn = lib.function(name)  # listed, as Metal's functionNames lists them
    with pytest.raises(pm.KernelError, match="'%s' is %s: pymetal's CPU backend runs compute kernels" % (name, REFUSED[name])):
        fn(grid=1)
        pm.synchronize()
    # the device goes on: a compute kernel of the library still runs
    x = np.ones(3, np.float32)
    lib.scale(x, np.float32(4), grid=3)
    np.testing.assert_array_equal(x, 4)


def test_graphics_only_file_compiles_and_lists_its_functions():
    lib = pm.compile(HEADER + r"""
struct Out { float4 position [[position]]; float4 color; };
vertex Out vert(const device packed_float3* v [[buffer(0)]], uint vid [[vertex_id]], uint iid [[instance_id]]) {
    Out o; o.position = float4(float3(v[vid]), 1); o.color = float4(iid); return o;
}
fragment half4 frag(Out in [[stage_in]], float4 fb [[color(0)]]) { return half4(in.color + fb); }
""")
    assert sorted(lib.functions) == ["frag", "vert"]


def test_metal_texture_header_and_tessellation_factors():
    lib = pm.compile(r"""#include <metal_stdlib>
#include <metal_texture>
using namespace metal;
kernel void factors(device MTLTriangleTessellationFactorsHalf* tri [[buffer(0)]],
                    device MTLQuadTessellationFactorsHalf* quad [[buffer(1)]],
                    constant float& level [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    for (int e = 0; e < 3; e++) tri[i].edgeTessellationFactor[e] = half(level + e);
    tri[i].insideTessellationFactor = half(level * 2);
    for (int e = 0; e < 4; e++) quad[i].edgeTessellationFactor[e] = half(level - e);
    quad[i].insideTessellationFactor[0] = quad[i].insideTessellationFactor[1] = half(i);
}
""")
    tri, quad = np.zeros((2, 4), np.float16), np.zeros((2, 6), np.float16)
    lib.factors(tri, quad, np.float32(4), grid=2)
    np.testing.assert_array_equal(tri, [[4, 5, 6, 8]] * 2)
    np.testing.assert_array_equal(quad, [[4, 3, 2, 1, 0, 0], [4, 3, 2, 1, 1, 1]])


# ---------------------------------------------------------------------------
# A function another .metal file of the library defines (Xcode links them): a clear compile error
# ---------------------------------------------------------------------------

def test_function_defined_in_another_file_is_a_clear_error(tmp_path):
    (tmp_path / "utilities.h").write_text("half gauss(half x, half sigma);\nfloat unused_elsewhere(float x);\n")
    src = HEADER + '#include "utilities.h"\n' + r"""
kernel void smooth(device half* v [[buffer(0)]], uint i [[thread_position_in_grid]]) { v[i] = gauss(v[i], 1.0h); }
"""
    with pytest.raises(pm.CompileError, match="function 'gauss' is declared and called but not defined in this source"):
        pm.compile(src, include_dirs=[str(tmp_path)])
    # called only from a kernel that binds textures (refused, its body not compiled): fine
    lib = pm.compile(HEADER + '#include "utilities.h"\n' + r"""
kernel void tex(texture2d<half, access::read> t [[texture(0)]], device half* v [[buffer(0)]]) { v[0] = gauss(t.read(uint2(0)).r, 1.0h); }
""", include_dirs=[str(tmp_path)])
    assert lib.functions == ["tex"]
    # appended, the file that defines it makes one library (a declared function nobody calls is fine)
    lib = pm.compile(src + "half gauss(half x, half sigma) { return exp(-x * x / (2 * sigma * sigma)); }\n",
                     include_dirs=[str(tmp_path)])
    v = np.array([0, 1, 2], np.float16)
    lib.smooth(v, grid=3)
    np.testing.assert_allclose(v, np.exp(-np.array([0, 1, 2.0]) ** 2 / 2), rtol=2e-3)


def test_prototype_then_definition_compiles():
    lib = pm.compile(HEADER + r"""
float twice(float x);
namespace helpers { float one(); }
float helpers::one() { return 1.0f; }
kernel void k(device float* v [[buffer(0)]], uint i [[thread_position_in_grid]]) { v[i] = fma(twice(v[i]), 2.0f, helpers::one()); }
float twice(float x) { return 2 * x; }
""")
    v = np.array([1, 2], np.float32)
    lib.k(v, grid=2)
    np.testing.assert_array_equal(v, [5, 9])
