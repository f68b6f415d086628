// pymetal's op functors: one small struct per operation, so that a new
// elementwise op is one functor here and one instantiation line.
#pragma once
#include <metal_stdlib>
using namespace metal;

struct Square { template <typename T> T operator()(T x) const { return x * x; } };
struct Cube   { template <typename T> T operator()(T x) const { return x * x * x; } };
struct Log    { template <typename T> T operator()(T x) const { return log(x); } };
struct Exp    { template <typename T> T operator()(T x) const { return exp(x); } };
struct Sqrt   { template <typename T> T operator()(T x) const { return sqrt(x); } };
struct Negate { template <typename T> T operator()(T x) const { return -x; } };

struct Add { template <typename T> T operator()(T a, T b) const { return a + b; } };
struct Sub { template <typename T> T operator()(T a, T b) const { return a - b; } };
struct Mul { template <typename T> T operator()(T a, T b) const { return a * b; } };
struct Div { template <typename T> T operator()(T a, T b) const { return a / b; } };
struct Max { template <typename T> T operator()(T a, T b) const { return max(a, b); } };
struct Min { template <typename T> T operator()(T a, T b) const { return min(a, b); } };
