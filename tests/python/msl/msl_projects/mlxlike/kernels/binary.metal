// Binary kernels, instantiated per operation and type by macros.
#include "mlxlike/kernels/utils.h"
#include "mlxlike/kernels/ops.h"
#include "mlxlike/kernels/binary.h"

#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;

#define instantiate_binary_all(op, tname, itype, otype)                   \
  instantiate_kernel("vv_" #op #tname, binary_vv, itype, otype, op)       \
  instantiate_kernel("sv_" #op #tname, binary_sv, itype, otype, op)       \
  instantiate_kernel("g_" #op #tname, binary_g, itype, otype, op)

#define instantiate_binary_types(op)                        \
  instantiate_binary_all(op, float32, float, float)         \
  instantiate_binary_all(op, float16, half, half)           \
  instantiate_binary_all(op, bfloat16, bfloat16_t, bfloat16_t) \
  instantiate_binary_all(op, int32, int32_t, int32_t)

instantiate_binary_types(Add)
instantiate_binary_types(Multiply)
instantiate_binary_types(Maximum)
