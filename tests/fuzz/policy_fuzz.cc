// Any bytes as a gate policy: a policy or a clear error, never an abort.
#include <cstddef>
#include <cstdint>
#include <string>

#include "gate/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto policy = perfgate::gate::ParsePolicy(text, "fuzz.yaml");
  if (!policy.ok() && policy.status().message().empty()) __builtin_trap();
  return 0;
}
