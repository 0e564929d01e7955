#include "suites/cuda/nccl.h"

#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace perfgate::cuda {
namespace {

absl::StatusOr<Nccl> OpenNccl() {
  void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) lib = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return absl::UnavailableError(absl::StrCat("cannot load NCCL (libnccl.so.2; set LD_LIBRARY_PATH): ",
                                               std::string(why ? why : "unknown")));
  }
  Nccl api{};
  std::string missing;
  auto resolve = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
    if (fn == nullptr) absl::StrAppend(&missing, missing.empty() ? "" : ", ", std::string(symbol));
  };
  resolve(api.GetErrorString, "ncclGetErrorString");
  resolve(api.GetUniqueId, "ncclGetUniqueId");
  resolve(api.CommInitRank, "ncclCommInitRank");
  resolve(api.CommInitAll, "ncclCommInitAll");
  resolve(api.CommDestroy, "ncclCommDestroy");
  resolve(api.GroupStart, "ncclGroupStart");
  resolve(api.GroupEnd, "ncclGroupEnd");
  resolve(api.AllReduce, "ncclAllReduce");
  resolve(api.AllGather, "ncclAllGather");
  resolve(api.ReduceScatter, "ncclReduceScatter");
  resolve(api.Broadcast, "ncclBroadcast");
  resolve(api.Send, "ncclSend");
  resolve(api.Recv, "ncclRecv");
  if (!missing.empty()) {
    dlclose(lib);
    return absl::UnavailableError(absl::StrCat("libnccl lacks ", missing));
  }
  return api;  // the handle stays open: the pointers live as long as the process
}

}  // namespace

absl::StatusOr<const Nccl*> LoadNccl() {
  static const absl::StatusOr<Nccl> loaded = OpenNccl();
  PERFGATE_RETURN_IF_ERROR(loaded);
  return &*loaded;
}

}  // namespace perfgate::cuda
