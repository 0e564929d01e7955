// The one spelling of "compiled for host and device": headers shared by the
// C++20 host code and nvcc's C++17 translation units (collectives/ops.h,
// seed.h) mark their device-callable functions with it. Needs no CUDA header.
#pragma once

#if defined(__CUDACC__)
/// __host__ __device__ under nvcc; nothing for the host compiler.
#define PERFGATE_HOST_DEVICE __host__ __device__
#else
#define PERFGATE_HOST_DEVICE
#endif
