// <simd/vector_types.h>: part of <simd/simd.h> (simd.h in this folder)
#pragma once
#include "simd.h"
