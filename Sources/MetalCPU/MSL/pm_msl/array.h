// MSL <metal_array>: metal::array<T, N>, a fixed-size aggregate like std::array
// (MLX's DivMod returns metal::array<T, 2>; `return {q, r};` initialises it).
#pragma once
#include <stddef.h>

namespace metal {
template <typename _PmT, size_t _PmN> struct array {
    _PmT _pm_elems[_PmN > 0 ? _PmN : 1]; // public, so that the struct stays an aggregate
    constexpr size_t size() const { return _PmN; }
    constexpr size_t max_size() const { return _PmN; }
    constexpr bool empty() const { return _PmN == 0; }
    constexpr _PmT &operator[](size_t _PmI) { return _pm_elems[_PmI]; }
    constexpr const _PmT &operator[](size_t _PmI) const { return _pm_elems[_PmI]; }
    constexpr _PmT &front() { return _pm_elems[0]; }
    constexpr const _PmT &front() const { return _pm_elems[0]; }
    constexpr _PmT &back() { return _pm_elems[_PmN - 1]; }
    constexpr const _PmT &back() const { return _pm_elems[_PmN - 1]; }
    constexpr _PmT *data() { return _pm_elems; }
    constexpr const _PmT *data() const { return _pm_elems; }
    constexpr _PmT *begin() { return _pm_elems; }
    constexpr const _PmT *begin() const { return _pm_elems; }
    constexpr _PmT *end() { return _pm_elems + _PmN; }
    constexpr const _PmT *end() const { return _pm_elems + _PmN; }
};
} // namespace metal
