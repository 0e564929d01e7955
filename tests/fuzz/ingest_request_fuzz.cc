// Any bytes as an Ingest request (OpenRun, a result batch, CloseRun): the
// checks of wire/validate.h and the conversions after them never abort, and
// what the checks pass converts.
#include <cstddef>
#include <cstdint>
#include <string>

#include "google/protobuf/stubs/logging.h"
#include "wire/convert.h"
#include "wire/validate.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Map keys are proto `string`: the parser refuses (and logs) invalid UTF-8
  // in them, which most mutated inputs hold. Silence the log.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  using namespace perfgate;
  switch (data[0] % 3) {
    case 0: {
      v1::OpenRunRequest r;
      if (!r.ParseFromString(bytes)) return 0;
      if (wire::ValidateOpenRun(r).ok() && !wire::FromProto(r).ok()) __builtin_trap();
      break;
    }
    case 1: {
      v1::ResultBatch b;
      if (!b.ParseFromString(bytes)) return 0;
      if (!wire::ValidateBatch(b).ok()) return 0;
      for (int i = 0; i < b.cases_size(); ++i) {
        if (!wire::FromProto(b.cases(i), "cases").ok()) __builtin_trap();
      }
      break;
    }
    default: {
      v1::CloseRunRequest c;
      if (!c.ParseFromString(bytes)) return 0;
      wire::ValidateCloseRun(c).IgnoreError();
    }
  }
  return 0;
}
