// Any bytes as a benchmark key: a parsed key prints back as the same text
// and passes the grammar ingest applies, so what ingest stores a query can
// name and the other way round.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/identity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string key(reinterpret_cast<const char*>(data), size);
  auto id = perfgate::ParseBenchmarkKey(key);
  if (!id.ok()) return 0;
  if (id->Key() != key) __builtin_trap();
  if (!perfgate::ValidateBenchmarkId(*id).ok()) __builtin_trap();
  return 0;
}
