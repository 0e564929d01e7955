// cuBLASLt, opened at run time. The agent links cudart statically so it
// starts on machines without a CUDA install; linking libcublasLt would undo
// that, so the few entry points the suites use are resolved with dlopen.
#pragma once

#include <cublasLt.h>

#include "absl/status/statusor.h"

namespace perfgate::cuda {

/// The cuBLASLt entry points the suites call.
struct CublasLt {
  decltype(&cublasLtCreate) Create;
  decltype(&cublasLtDestroy) Destroy;
  decltype(&cublasLtGetStatusString) GetStatusString;
  decltype(&cublasLtMatmulDescCreate) MatmulDescCreate;
  decltype(&cublasLtMatmulDescDestroy) MatmulDescDestroy;
  decltype(&cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute;
  decltype(&cublasLtMatrixLayoutCreate) MatrixLayoutCreate;
  decltype(&cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy;
  decltype(&cublasLtMatrixLayoutSetAttribute) MatrixLayoutSetAttribute;
  decltype(&cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate;
  decltype(&cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute;
  decltype(&cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic;
  decltype(&cublasLtMatmul) Matmul;
};

/// The library, loaded on first use and kept for the process's lifetime;
/// FAILED_PRECONDITION naming the library when it cannot be opened.
absl::StatusOr<const CublasLt*> LoadCublasLt();

}  // namespace perfgate::cuda
