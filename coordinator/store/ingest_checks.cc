#include "coordinator/store/ingest_checks.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/identity.h"
#include "nlohmann/json.hpp"

namespace perfgate::coordinator::store::ingest {
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
      // The values' bytes: exact, and cheap for batches of 65 536 values.
      absl::StrAppend(&canonical, s.values.size(), ":");
      canonical.append(reinterpret_cast<const char*>(s.values.data()), s.values.size() * sizeof(double));
      canonical.push_back(',');
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

std::string IndexRanges(const std::vector<CaseResult>& cases) {
  nlohmann::json ranges = nlohmann::json::array();
  for (const CaseResult& c : cases) {
    if (c.samples.empty()) continue;
    uint32_t lo = std::numeric_limits<uint32_t>::max(), hi = 0;
    for (const Sample& s : c.samples) {
      lo = std::min(lo, s.index);
      hi = std::max(hi, s.index);
    }
    ranges.push_back({c.benchmark.Key(), lo, hi});
  }
  return ranges.dump();
}

absl::Status CheckNewIndices(pqxx::work& txn, const std::string& run_id, int64_t sequence,
                             const std::vector<CaseResult>& cases, const std::vector<int64_t>& first_metric_ids) {
  // What the run's other batches hold: per benchmark key, index ranges.
  std::multimap<std::string, std::pair<int64_t, int64_t>> stored;
  for (const auto& row : txn.exec_params(
           "SELECT r->>0, (r->>1)::bigint, (r->>2)::bigint FROM batches b, jsonb_array_elements(b.ranges) r "
           "WHERE b.run_id = $1 AND b.sequence <> $2",
           run_id, sequence)) {
    stored.emplace(row[0].as<std::string>(), std::make_pair(row[1].as<int64_t>(), row[2].as<int64_t>()));
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    const CaseResult& c = cases[i];
    if (c.samples.empty() || first_metric_ids[i] == 0) continue;
    const auto [low, high] = std::minmax_element(c.samples.begin(), c.samples.end(),
                                                 [](const Sample& a, const Sample& b) { return a.index < b.index; });
    const int64_t lo = low->index, hi = high->index;
    const auto [first, last] = stored.equal_range(c.benchmark.Key());
    const bool overlaps = std::any_of(first, last, [&](const auto& r) {
      return r.second.first <= hi && lo <= r.second.second;
    });
    if (!overlaps) continue;
    std::set<uint32_t> mine;
    for (const Sample& s : c.samples) mine.insert(s.index);
    for (const auto& row : txn.exec_params(
             "SELECT idx FROM samples WHERE run_id = $1 AND metric_id = $2 AND idx BETWEEN $3 AND $4 ORDER BY idx",
             run_id, first_metric_ids[i], lo, hi)) {
      const auto idx = row[0].as<uint32_t>();
      if (mine.count(idx) != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "benchmark ", c.benchmark.Key(), " sample index ", idx, " is stored for run ", run_id,
            " already; a sample index appears once per case and run"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckOneDefinition(pqxx::work& txn, const std::string& run_id, const std::vector<CaseResult>& cases,
                                const std::vector<std::vector<int64_t>>& metric_ids) {
  auto refuse = [&](const std::string& key, const std::string& name, const std::string& unit_before,
                    const std::string& direction_before, const MetricSpec& m) {
    return absl::InvalidArgumentError(absl::StrCat(
        "benchmark ", key, " metric '", name, "': this run sent it in unit '", unit_before, "' (",
        direction_before, ") before and now in '", m.unit, "' (", ToString(m.direction),
        "); one run reports a metric in one unit and direction"));
  };
  // Within the batch: (key, name) -> its first definition.
  std::map<std::pair<std::string, std::string>, const MetricSpec*> seen;
  nlohmann::json mine = nlohmann::json::array();
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string key = cases[i].benchmark.Key();
    for (size_t j = 0; j < cases[i].metrics.size(); ++j) {
      const MetricSpec& m = cases[i].metrics[j];
      auto [it, added] = seen.try_emplace({key, m.name}, &m);
      if (!added && (it->second->unit != m.unit || it->second->direction != m.direction)) {
        return refuse(key, m.name, it->second->unit, std::string(ToString(it->second->direction)), m);
      }
      if (added) mine.push_back({{"id", metric_ids[i][j]}, {"key", key}, {"j", j}, {"i", i}});
    }
  }
  // Against the run's earlier batches: any summary row of another
  // definition of the same (benchmark, name).
  pqxx::result r = txn.exec_params(
      "SELECT x->>'i', x->>'j', m.unit, m.direction FROM jsonb_array_elements($2::jsonb) x "
      "JOIN metrics mine ON mine.id = (x->>'id')::bigint "
      "JOIN metrics m ON m.benchmark_id = mine.benchmark_id AND m.name = mine.name AND m.id <> mine.id "
      "JOIN summaries s ON s.metric_id = m.id AND s.run_id = $1 LIMIT 1",
      run_id, mine.dump());
  if (r.empty()) return absl::OkStatus();
  const CaseResult& c = cases.at(r[0][0].as<size_t>());
  const MetricSpec& m = c.metrics.at(r[0][1].as<size_t>());
  return refuse(c.benchmark.Key(), m.name, r[0][2].as<std::string>(), r[0][3].as<std::string>(), m);
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

absl::Status CheckCloseAgainstStored(pqxx::transaction_base& txn, const std::string& run_id, RunStatus status,
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

}  // namespace perfgate::coordinator::store::ingest
