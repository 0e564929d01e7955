// The checks of Ingest writes against what PostgreSQL already holds, used
// by Store inside its transactions (store.cc): a resent batch must carry the
// content stored under its sequence, a sample index is stored once per case
// and run, a run keeps one definition per metric name, a reopened run is the
// same run, and a close agrees with the batches stored. Each refusal is a
// status naming the run, batch, case or field; nothing here writes.
#pragma once

#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/model.h"

namespace perfgate::coordinator::ingest {

/// A digest of everything a batch carries (cases, metrics, samples, statuses).
std::string BatchDigest(const std::vector<CaseResult>& cases);

/// A batch (run, sequence) is stored already: OK when `digest` is what was
/// stored (or nothing was, for batches older than digests); otherwise
/// INVALID_ARGUMENT: other content under a known sequence is never a replay.
absl::Status CheckResentBatch(pqxx::work& txn, const std::string& run_id, int64_t sequence,
                              const std::string& digest);

/// No sample index of `c` (benchmark `bench_id`, first metric `metric_id`)
/// is stored for the run already; INVALID_ARGUMENT naming the first one.
absl::Status CheckNewIndices(pqxx::work& txn, const std::string& run_id, int64_t metric_id,
                             const CaseResult& c);

/// The run reports metric `name` of benchmark `bench_id` under no other
/// definition than `metric_id`; INVALID_ARGUMENT naming both units otherwise.
absl::Status CheckOneDefinition(pqxx::work& txn, const std::string& run_id, int64_t bench_id,
                                int64_t metric_id, const std::string& key, const MetricSpec& m);

/// An OpenRun of a run that is open already names the same run: agent,
/// branch, SKU, commit and repo. FAILED_PRECONDITION naming what differs.
absl::Status CheckReopen(const pqxx::row& stored, int64_t agent_id, const RunMeta& meta);
/// The columns CheckReopen reads, in its order, for "SELECT <these> FROM runs".
const char* ReopenColumns();

/// A close agrees with what is stored: no batch above last_sequence, and a
/// run closed complete has at least one batch. FAILED_PRECONDITION otherwise.
absl::Status CheckCloseAgainstStored(pqxx::work& txn, const std::string& run_id, RunStatus status,
                                     uint64_t last_sequence);

}  // namespace perfgate::coordinator::ingest
