// Element-wise functors.
#pragma once

#include "utils.h"

struct Add {
  template <typename T>
  T operator()(T x, T y) { return x + y; }
};

struct Multiply {
  template <typename T>
  T operator()(T x, T y) { return x * y; }
};

struct Maximum {
  template <typename T>
  metal::enable_if_t<metal::is_integral_v<T>, T> operator()(T x, T y) { return metal::max(x, y); }
  template <typename T>
  metal::enable_if_t<!metal::is_integral_v<T>, T> operator()(T x, T y) {
    if (metal::isnan(x)) return x;
    return x > y ? x : y;
  }
};

struct Sigmoid {
  template <typename T>
  T operator()(T x) {
    auto y = 1 / (1 + metal::exp(metal::abs(x)));
    return (x < 0) ? y : 1 - y;
  }
};
