#include "coordinator/ingest_checks.h"

#include <algorithm>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/identity.h"

namespace perfgate::coordinator::ingest {
namespace {

// Length-prefixed, so no two contents share a canonical text.
void Put(std::string* out, const std::string& s) { absl::StrAppend(out, s.size(), ":", s, ";"); }

}  // namespace

std::string BatchDigest(const std::vector<CaseResult>& cases) {
  std::string canonical;
  for (const CaseResult& c : cases) {
    Put(&canonical, c.benchmark.Key());
    for (const MetricSpec& m : c.metrics) {
      Put(&canonical, m.name);
      Put(&canonical, m.unit);
      Put(&canonical, std::string(ToString(m.direction)));
    }
    for (const Sample& s : c.samples) {
      absl::StrAppend(&canonical, s.index, s.throttled ? "t" : "u");
      for (double v : s.values) absl::StrAppend(&canonical, absl::StrFormat("%.17g,", v));
    }
    Put(&canonical, std::string(ToString(c.status)));
    Put(&canonical, c.reason);
    absl::StrAppend(&canonical, absl::StrFormat("%.17g|", c.noise));
  }
  return Sha256Hex(canonical);
}

absl::Status CheckResentBatch(pqxx::work& txn, const std::string& run_id, int64_t sequence,
                              const std::string& digest) {
  pqxx::result r = txn.exec_params("SELECT digest FROM batches WHERE run_id = $1 AND sequence = $2",
                                   run_id, sequence);
  if (r.empty()) return absl::OkStatus();
  const std::string stored = r[0][0].as<std::string>();
  if (stored.empty() || stored == digest) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "batch ", sequence, " of run ", run_id,
      " is stored with other content; a resent batch must be the same batch (send new results under a new "
      "sequence)"));
}

absl::Status CheckNewIndices(pqxx::work& txn, const std::string& run_id, int64_t metric_id,
                             const CaseResult& c) {
  if (c.samples.empty()) return absl::OkStatus();
  std::set<uint32_t> mine;
  for (const Sample& s : c.samples) mine.insert(s.index);
  // Agents number a case's samples in rising runs, so the range holds
  // stored rows only when the indices truly overlap.
  for (const auto& row : txn.exec_params(
           "SELECT idx FROM samples WHERE run_id = $1 AND metric_id = $2 AND idx BETWEEN $3 AND $4 ORDER BY idx",
           run_id, metric_id, static_cast<int64_t>(*mine.begin()), static_cast<int64_t>(*mine.rbegin()))) {
    const auto idx = row[0].as<uint32_t>();
    if (mine.count(idx) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "benchmark ", c.benchmark.Key(), " sample index ", idx, " is stored for run ", run_id,
          " already; a sample index appears once per case and run"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckOneDefinition(pqxx::work& txn, const std::string& run_id, int64_t bench_id,
                                int64_t metric_id, const std::string& key, const MetricSpec& m) {
  pqxx::result r = txn.exec_params(
      "SELECT m.unit, m.direction FROM summaries s JOIN metrics m ON m.id = s.metric_id "
      "WHERE s.run_id = $1 AND m.benchmark_id = $2 AND m.name = $3 AND m.id <> $4 LIMIT 1",
      run_id, bench_id, m.name, metric_id);
  if (r.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "benchmark ", key, " metric '", m.name, "': this run sent it in unit '", r[0][0].as<std::string>(),
      "' (", r[0][1].as<std::string>(), ") before and now in '", m.unit, "' (", ToString(m.direction),
      "); one run reports a metric in one unit and direction"));
}

const char* ReopenColumns() { return "status, agent_id, branch, sku, commit, repo"; }

absl::Status CheckReopen(const pqxx::row& stored, int64_t agent_id, const RunMeta& meta) {
  struct Field {
    const char* name;
    std::string stored;
    std::string sent;
  };
  const Field fields[] = {
      {"agent", stored[1].as<std::string>(), std::to_string(agent_id)},
      {"branch", stored[2].as<std::string>(), meta.branch},
      {"sku", stored[3].as<std::string>(), meta.environment.sku},
      {"commit", stored[4].as<std::string>(), meta.commit},
      {"repo", stored[5].as<std::string>(), meta.repo},
  };
  for (const Field& f : fields) {
    if (f.stored != f.sent) {
      return absl::FailedPreconditionError(absl::StrCat(
          "run ", meta.run_id, " is open with another ", f.name, " ('", f.stored, "', not '", f.sent,
          "'); a run id names one run, start a new run with a new id"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckCloseAgainstStored(pqxx::work& txn, const std::string& run_id, RunStatus status,
                                     uint64_t last_sequence) {
  pqxx::row r = txn.exec_params1(
      "SELECT coalesce(max(sequence), 0)::bigint, count(*) FROM batches WHERE run_id = $1", run_id);
  const auto highest = r[0].as<uint64_t>();
  const auto batches = r[1].as<uint64_t>();
  if (highest > last_sequence) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run ", run_id, " has batches up to ", highest, " stored, above last_sequence ", last_sequence,
        "; close it with the highest sequence sent"));
  }
  if (status == RunStatus::kComplete && batches == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run ", run_id, " has no batch stored; a run without results cannot be complete, close it as failed"));
  }
  return absl::OkStatus();
}

}  // namespace perfgate::coordinator::ingest
