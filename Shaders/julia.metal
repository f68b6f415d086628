// The Julia set of metalcompute's demo: one thread per pixel, RGBA8 out.
#include <metal_stdlib>
using namespace metal;

struct JuliaParams {
    float2 c;        // the set's constant
    float scale;     // view half-width
    uint width;
    uint height;
    uint iterations;
};

kernel void julia(constant JuliaParams& p [[buffer(0)]],
                  device uchar4* image [[buffer(1)]],
                  uint2 pos [[thread_position_in_grid]]) {
    if (pos.x >= p.width || pos.y >= p.height) return;
    float2 z = (float2(pos) - 0.5f * float2(p.width, p.height)) / float(p.height) * (2.0f * p.scale);
    const float R = 100.0f;
    float m = 0.0f;
    float i = 0.0f;
    for (uint iter = 0; iter < p.iterations; iter++) {
        z = float2(z.x * z.x - z.y * z.y + p.c.x, 2.0f * z.x * z.y + p.c.y);
        m = dot(z, z);
        if (m > R * R) break;
        i += 1.0f;
    }
    // Smooth colouring, as metalcompute's shader.
    i -= log2(log(sqrt(max(m, 1.0001f))) / log(R)) - 1.0f;
    float hue = log2(max(i, 1.0f)) * 8.0f;
    float3 rgb = 0.5f + 0.4f * sin(hue * float3(0.31f, 0.53f, 0.71f));
    if (i >= float(p.iterations)) rgb = float3(0.0f);
    image[pos.y * p.width + pos.x] = uchar4(uchar3(saturate(rgb) * 255.0f), 255);
}
