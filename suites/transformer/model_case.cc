#include "suites/transformer/model_case.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "suites/cuda/visible_devices.h"

namespace perfgate::suites::transformer {

bool ReadBackend(State& state, Backend* backend) {
  const std::string& name = state.Param("backend");
  const std::string& dtype = state.Param("dtype");
  if (name == "host") {
    if (dtype != "fp32") {
      state.Fail(absl::StrCat("dtype '", dtype, "': the host backend computes in fp32"));
      return false;
    }
    const int64_t threads = state.IntParam("threads");
    if (state.failed()) return false;
    if (threads <= 0 || threads > 1024) {
      state.Fail("threads must be in 1..1024");
      return false;
    }
    *backend = Backend{.cuda = false, .threads = static_cast<int>(threads)};
    return true;
  }
  if (name == "cuda") {
    if (dtype != "bf16") {
      state.Fail(absl::StrCat("dtype '", dtype, "': the CUDA backend computes in bf16 (fp32 master weights)"));
      return false;
    }
    *backend = Backend{.cuda = true};
    return true;
  }
  state.Fail(absl::StrCat("backend '", name, "': expected host or cuda"));
  return false;
}

std::map<std::string, std::string> ModelPoint(const std::string& backend, const std::string& preset) {
  std::map<std::string, std::string> p = {{"backend", backend}, {"preset", preset}};
  p["dtype"] = "bf16";
  if (backend == "host") {
    p["dtype"] = "fp32";
    p["threads"] = "1";
  }
  return p;
}

std::string ModelCaseUnavailable(const BenchmarkId& id) {
  auto backend = id.params.find("backend");
  if (backend == id.params.end() || backend->second != "cuda") return "";
  // In a build without CUDA this says "built without CUDA".
  const absl::StatusOr<int> visible = perfgate::cuda::VisibleDevices();
  return visible.ok() ? "" : std::string(visible.status().message());
}

absl::StatusOr<Config> CaseConfig(const std::string& preset, int64_t batch, int64_t seq) {
  std::optional<Config> c = Preset(preset);
  if (!c) {
    std::string names;
    for (const std::string& n : PresetNames()) names += (names.empty() ? "" : ", ") + n;
    return absl::InvalidArgumentError(absl::StrCat("preset '", preset, "': expected one of ", names));
  }
  if (batch <= 0 || batch > (1 << 20)) return absl::InvalidArgumentError("batch must be in 1..1048576");
  if (seq <= 0 || seq > (1 << 20)) return absl::InvalidArgumentError("seq must be in 1..1048576");
  c->batch = static_cast<int>(batch);
  c->seq = static_cast<int>(seq);
  if (std::string why = Validate(*c); !why.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("preset ", preset, ": ", why));
  }
  return *c;
}

void Conclude(State& state, const absl::Status& s) {
  if (s.ok()) return;
  if (s.code() == absl::StatusCode::kUnavailable || s.code() == absl::StatusCode::kFailedPrecondition) {
    return state.Skip(std::string(s.message()));
  }
  state.Fail(std::string(s.message()));
}

}  // namespace perfgate::suites::transformer
