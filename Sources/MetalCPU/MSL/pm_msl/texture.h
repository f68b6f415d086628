// Textures, samplers and the entry points MetalCPU does not run (see Compiler/EntryPoints.swift).
//
// MetalCPU runs compute kernels that bind buffers. A file that also holds vertex or fragment
// functions, or kernels that bind textures or samplers, compiles: each such entry point becomes a
// kernel without parameters whose body calls refused_entry_point, so that dispatching it raises a
// clear error, and the texture and sampler types below are declared so that helper functions taking
// them compile. Their members report the same error if they are ever reached (only a texture that a
// kernel made itself could reach them: none is bound).
#pragma once
#include "pm_msl/runtime.h"

#pragma GCC visibility push(hidden)
namespace pm::rt {
inline void refused_entry_point(const char *name, const char *what) {
    set_error(get_worker(),
              "'%s' is %s: pymetal's CPU backend runs compute kernels that bind buffers (and threadgroup memory), "
              "not render pipelines, textures or samplers; run this function with Metal on a Mac",
              name, what);
}
inline void texture_unsupported() {
    set_error(get_worker(), "textures, samplers and tessellation patches are not supported by pymetal's CPU backend: "
              "bind a buffer instead");
}
} // namespace pm::rt
#pragma GCC visibility pop

namespace metal {
enum class access { sample, read, write, read_write };

// Sampler arguments (constexpr sampler s(coord::normalized, address::repeat, filter::linear)).
enum class coord { normalized, pixel };
enum class filter { nearest, linear, bicubic };
enum class mag_filter { nearest, linear, bicubic };
enum class min_filter { nearest, linear, bicubic };
enum class mip_filter { none, nearest, linear };
enum class address { clamp_to_zero, clamp_to_edge, repeat, mirrored_repeat, clamp_to_border };
enum class s_address { clamp_to_zero, clamp_to_edge, repeat, mirrored_repeat, clamp_to_border };
enum class t_address { clamp_to_zero, clamp_to_edge, repeat, mirrored_repeat, clamp_to_border };
enum class r_address { clamp_to_zero, clamp_to_edge, repeat, mirrored_repeat, clamp_to_border };
enum class compare_func { none, less, less_equal, greater, greater_equal, equal, not_equal, always, never };
enum class border_color { transparent_black, opaque_black, opaque_white };
enum class reduction { weighted_average, minimum, maximum };
struct max_anisotropy { constexpr max_anisotropy(int) {} };
struct lod_clamp { constexpr lod_clamp(float, float) {} };
struct sampler {
    constexpr sampler() {}
    template <class... _PmA> constexpr sampler(_PmA...) {}
};

// Texture lookups with their gradient, bias or level arguments.
struct bias { constexpr bias(float) {} };
struct level { constexpr level(float) {} };
struct min_lod_clamp { constexpr min_lod_clamp(float) {} };
struct gradient2d { constexpr gradient2d(float2, float2) {} };
struct gradient3d { constexpr gradient3d(float3, float3) {} };
struct gradientcube { constexpr gradientcube(float3, float3) {} };

template <class _PmT, class _PmTexel> struct pm_texture {
    template <class... _PmA> _PmTexel read(_PmA...) const { ::pm::rt::texture_unsupported(); return _PmTexel(); }
    template <class... _PmA> _PmTexel sample(_PmA...) const { ::pm::rt::texture_unsupported(); return _PmTexel(); }
    template <class... _PmA> vec<_PmT, 4> gather(_PmA...) const { ::pm::rt::texture_unsupported(); return {}; }
    template <class... _PmA> _PmT sample_compare(_PmA...) const { ::pm::rt::texture_unsupported(); return _PmT(); }
    template <class... _PmA> void write(_PmA...) const { ::pm::rt::texture_unsupported(); }
    uint get_width(uint = 0) const { ::pm::rt::texture_unsupported(); return 0; }
    uint get_height(uint = 0) const { ::pm::rt::texture_unsupported(); return 0; }
    uint get_depth(uint = 0) const { ::pm::rt::texture_unsupported(); return 0; }
    uint get_array_size() const { ::pm::rt::texture_unsupported(); return 0; }
    uint get_num_mip_levels() const { ::pm::rt::texture_unsupported(); return 0; }
    uint get_num_samples() const { ::pm::rt::texture_unsupported(); return 0; }
    void fence() const {}
};
#define PM_TEXTURE(_PmName)                                                          \
    template <class _PmT, access _PmA = access::sample>                                \
    struct _PmName : pm_texture<_PmT, vec<_PmT, 4>> {};
PM_TEXTURE(texture1d) PM_TEXTURE(texture1d_array) PM_TEXTURE(texture2d) PM_TEXTURE(texture2d_array)
PM_TEXTURE(texture3d) PM_TEXTURE(texturecube) PM_TEXTURE(texturecube_array) PM_TEXTURE(texture2d_ms)
PM_TEXTURE(texture2d_ms_array) PM_TEXTURE(texture_buffer)
#undef PM_TEXTURE
#define PM_DEPTH(_PmName)                                                            \
    template <class _PmT, access _PmA = access::sample>                                \
    struct _PmName : pm_texture<_PmT, _PmT> {};
PM_DEPTH(depth2d) PM_DEPTH(depth2d_array) PM_DEPTH(depthcube) PM_DEPTH(depthcube_array) PM_DEPTH(depth2d_ms)
PM_DEPTH(depth2d_ms_array)
#undef PM_DEPTH

// Tessellation: a post-tessellation vertex function's patch (refused with its function) and the factors
// a compute kernel writes for the tessellator, which are plain structs (a kernel writing them runs).
template <class _PmT> struct patch_control_point {
    _PmT operator[](uint) const { ::pm::rt::texture_unsupported(); return _PmT(); }
    uint size() const { return 0; }
};
} // namespace metal
struct MTLTriangleTessellationFactorsHalf { half edgeTessellationFactor[3]; half insideTessellationFactor; };
struct MTLQuadTessellationFactorsHalf { half edgeTessellationFactor[4]; half insideTessellationFactor[2]; };
