// The checks of Ingest writes against what PostgreSQL already holds, used
// by the repositories inside their transactions (runs.cc, batches.cc,
// summaries.cc): a resent batch must carry the content stored under its
// sequence, a sample index is stored once per case and run, a run keeps one
// definition per metric name, a reopened run is the same run, and a close
// agrees with the batches stored. Each refusal is a
// status naming the run, batch, case or field; nothing here writes.
// Internal to coordinator/store/ (it includes libpqxx).
#pragma once

#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/run_types.h"

namespace perfgate::coordinator::store::ingest {

/// A digest of everything a batch carries (cases, metrics, samples, statuses).
std::string BatchDigest(const std::vector<CaseResult>& cases);

/// A batch (run, sequence) is stored already: OK when `digest` is what was
/// stored (or nothing was, for batches older than digests); otherwise
/// INVALID_ARGUMENT: other content under a known sequence is never a replay.
absl::Status CheckResentBatch(pqxx::work& txn, const std::string& run_id, int64_t sequence,
                              const std::string& digest);

/// The sample index range of each case of a batch, as JSON text
/// `[[benchmark key, lowest index, highest index], ...]` (cases without
/// samples left out), stored with the batch for CheckNewIndices.
std::string IndexRanges(const std::vector<CaseResult>& cases);

/// No sample index of a case of batch `sequence` is stored for the run in
/// another batch already; INVALID_ARGUMENT naming the first one. The stored
/// batches' index ranges are compared first (agents number a case's samples
/// in rising runs, so ranges seldom overlap); samples are read only for a
/// case whose range overlaps. `first_metric_ids[i]` is the first metric of
/// cases[i] (0: none).
absl::Status CheckNewIndices(pqxx::work& txn, const std::string& run_id, int64_t sequence,
                             const std::vector<CaseResult>& cases, const std::vector<int64_t>& first_metric_ids);

/// One definition (unit, direction) per metric name of a benchmark in a run:
/// within the batch, and against the metrics the run reported before.
/// `metric_ids[i][j]` is the stored id of cases[i].metrics[j].
/// INVALID_ARGUMENT naming both units otherwise.
absl::Status CheckOneDefinition(pqxx::work& txn, const std::string& run_id, const std::vector<CaseResult>& cases,
                                const std::vector<std::vector<int64_t>>& metric_ids);

/// An OpenRun of a run that is open already names the same run: agent,
/// branch, SKU, commit and repo. FAILED_PRECONDITION naming what differs.
absl::Status CheckReopen(const pqxx::row& stored, int64_t agent_id, const RunMeta& meta);
/// The columns CheckReopen reads, in its order, for "SELECT <these> FROM runs".
const char* ReopenColumns();

/// A close agrees with what is stored: no batch above last_sequence, and a
/// run closed complete has at least one batch. FAILED_PRECONDITION otherwise.
absl::Status CheckCloseAgainstStored(pqxx::transaction_base& txn, const std::string& run_id, RunStatus status,
                                     uint64_t last_sequence);

}  // namespace perfgate::coordinator::store::ingest
