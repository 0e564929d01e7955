#include "suites/cuda/cublaslt.h"

#include <dlfcn.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace perfgate::cuda {
namespace {

// The soname of the toolkit the suites were compiled against: cuBLASLt's
// ABI changes with the major version.
std::string SoName() { return absl::StrCat("libcublasLt.so.", CUBLAS_VER_MAJOR); }

absl::StatusOr<CublasLt> OpenCublasLt() {
  const std::string name = SoName();
  void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load ", name, " (", std::string(why ? why : "unknown"),
                     "): install the CUDA ", CUBLAS_VER_MAJOR, " cuBLAS library"));
  }
  CublasLt lt{};
  std::string missing;
  auto resolve = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
    if (fn == nullptr) absl::StrAppend(&missing, missing.empty() ? "" : ", ", std::string(symbol));
  };
  resolve(lt.Create, "cublasLtCreate");
  resolve(lt.Destroy, "cublasLtDestroy");
  resolve(lt.GetStatusString, "cublasLtGetStatusString");
  resolve(lt.MatmulDescCreate, "cublasLtMatmulDescCreate");
  resolve(lt.MatmulDescDestroy, "cublasLtMatmulDescDestroy");
  resolve(lt.MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
  resolve(lt.MatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
  resolve(lt.MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
  resolve(lt.MatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute");
  resolve(lt.MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
  resolve(lt.MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
  resolve(lt.MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
  resolve(lt.MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
  resolve(lt.Matmul, "cublasLtMatmul");
  if (!missing.empty()) {
    dlclose(lib);
    return absl::FailedPreconditionError(absl::StrCat(name, " lacks ", missing));
  }
  return lt;  // the handle stays open: the pointers live as long as the process
}

}  // namespace

absl::StatusOr<const CublasLt*> LoadCublasLt() {
  static const absl::StatusOr<CublasLt> loaded = OpenCublasLt();
  PERFGATE_RETURN_IF_ERROR(loaded);
  return &*loaded;
}

}  // namespace perfgate::cuda
