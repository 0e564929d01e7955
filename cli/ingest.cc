#include "cli/ingest.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/coordinator_client.h"
#include "client/upload.h"
#include "common/exit_codes.h"
#include "common/identity.h"
#include "common/status_macros.h"
#include "formats/case_evidence.h"
#include "formats/result_file.h"
#include "wire/convert.h"

namespace perfgate::cli {
namespace {

int Fail(const absl::Status& s) {
  std::cerr << "perfgate: ingest: " << s.message() << "\n";
  return kExitError;
}

std::string LocalHostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// The run a file becomes: a fresh id, the file's context as its environment.
absl::StatusOr<RunMeta> MetaFor(const std::string& path, const ResultSet& set, const IngestOptions& o) {
  RunMeta meta;
  meta.run_id = NewUuid();
  meta.environment.sku = o.sku.empty() ? set.sku : o.sku;
  if (meta.environment.sku.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": the file names no SKU; pass --sku, e.g. --sku cpu-amd-epyc-7b13 or --sku h100-sxm5-80gb",
        set.format == kFormatGoogleBenchmark
            ? " (Google Benchmark records no CPU model unless the program adds \"cpu_model\" with "
              "benchmark::AddCustomContext)"
            : ""));
  }
  for (const auto& [k, v] : set.context) {
    // A perfgate file's own run fields (its id, branch, ...) describe the run
    // it came from, not the machine; this run gets its own.
    if (k.rfind(kRunContextPrefix, 0) == 0) continue;
    meta.environment.fields[k] = v;
  }
  meta.environment.fields["result_file_format"] = set.format;
  meta.node = o.node;
  for (const char* key : {"run.node", "host_name"}) {
    if (auto it = set.context.find(key); meta.node.empty() && it != set.context.end()) meta.node = it->second;
  }
  if (meta.node.empty()) meta.node = LocalHostname();
  meta.agent_name = meta.node;
  meta.repo = o.repo;
  meta.branch = o.branch;
  meta.commit = o.commit;
  meta.trigger = Trigger::kManual;
  meta.started_at = std::chrono::system_clock::now();
  return meta;
}

// A file's run, sent whole; nothing is spooled: the file is still there to send again.
absl::StatusOr<uint64_t> Send(client::CoordinatorClient& coordinator, const RunMeta& meta,
                              const std::vector<CaseResult>& cases) {
  auto upload = client::RunUpload::Create(coordinator, meta);
  PERFGATE_RETURN_IF_ERROR(upload);
  PERFGATE_RETURN_IF_ERROR(upload->Register(meta.node, PERFGATE_VERSION));
  return upload->SendWhole(cases);
}

}  // namespace

int IngestCommand(const IngestOptions& o) {
  // Every file is read and checked before anything is stored, so a bad file
  // leaves no partial set of runs behind.
  std::vector<std::pair<RunMeta, ResultSet>> runs;
  for (const std::string& path : o.files) {
    auto set = ReadResultFile(path, o.format);
    if (!set.ok()) return Fail(set.status());
    for (const std::string& note : set->notes) std::cerr << "note: " << path << ": " << note << "\n";
    // A run of nothing measured would be stored as complete, and gate as nothing.
    if (std::none_of(set->cases.begin(), set->cases.end(), Judgeable)) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(path, ": nothing to store: ", WithoutSamples(*set))));
    }
    auto meta = MetaFor(path, *set, o);
    if (!meta.ok()) return Fail(meta.status());
    runs.emplace_back(std::move(*meta), std::move(*set));
  }
  client::ClientOptions options = o.client;  // the token and TLS
  options.address = o.coordinator;
  options.timeout_s = o.timeout_s;
  client::CoordinatorClient coordinator(options);
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& [meta, set] = runs[i];
    auto stored = Send(coordinator, meta, set.cases);
    if (!stored.ok()) {
      std::cerr << "perfgate: ingest: " << o.files[i] << ": " << stored.status().message();
      if (stored.status().code() == absl::StatusCode::kUnavailable ||
          stored.status().code() == absl::StatusCode::kDeadlineExceeded) {
        std::cerr << " (is a coordinator listening on " << o.coordinator << "?)";
      }
      std::cerr << "\n";
      return kExitError;
    }
    std::cout << "run_id: " << meta.run_id << "  (" << o.files[i] << ": " << set.format << ", "
              << set.cases.size() << " cases, " << *stored << " samples stored, sku " << meta.environment.sku
              << ")\n";
  }
  return kExitPass;
}

}  // namespace perfgate::cli
