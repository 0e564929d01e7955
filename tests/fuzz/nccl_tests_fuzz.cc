// Any bytes as nccl-tests output: the seeds are real outputs' shapes, so the
// fuzzer mutates headers, rank lines and result rows; a result set or a clear
// error, never an abort.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/result_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto set = perfgate::ParseResultText(text, "fuzz.txt");
  if (!set.ok() && set.status().message().empty()) __builtin_trap();  // an error always says what
  return 0;
}
