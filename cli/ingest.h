// `perfgate ingest`: stores result files written by other tools (Google
// Benchmark, nvbench, pytest-benchmark, hyperfine, nccl-tests, Bencher's
// format) or by `perfgate-agent run --output` as runs, through the
// coordinator's Ingest service, so that they can be gated like measured runs.
// What a reader passed over or approximated is printed as "note: FILE: ...".
#pragma once

#include <string>
#include <vector>

#include "client/coordinator_client.h"

namespace perfgate::cli {

/// What `perfgate ingest` needs; files are read before anything is sent.
struct IngestOptions {
  std::vector<std::string> files;
  std::string coordinator = "127.0.0.1:50051";
  double timeout_s = 60;   // per call
  client::ClientOptions client;  // token and TLS (set by ValidateConfig)
  std::string branch;
  std::string commit;
  std::string sku;   // overrides the file's; required when the file names none
  std::string repo;
  std::string node;  // default: the file's host, else this machine's hostname
  std::string format;  // --format: the files' format (ResultFormatNames); detected when empty
};

/// Stores each file as a fresh run and prints its id; 0 when every file was
/// stored, 2 (with the reason on stderr) on any error, a file in which
/// nothing was measured among them.
int IngestCommand(const IngestOptions& options);

}  // namespace perfgate::cli
