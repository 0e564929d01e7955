// The gate's input from measured cases: the medians of the processes behind
// a metric, and the run a list of cases (result files, the sides of an A/B
// job) makes, with each metric summarized over its unthrottled samples.
#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/stats.h"
#include "gate/gate.h"
#include "gate/gate_internal.h"

namespace perfgate::gate {
namespace {

// The parts of one case joined in order, metric by metric: a later part may
// carry other metrics (the counts `run --count` adds after the timed
// samples), each sample a value of its own part's metrics.
struct Joined {
  std::vector<MetricSpec> metrics;  // every part's, in the order first seen
  CaseStatus status = CaseStatus::kUnspecified;
  std::string reason;
  std::optional<ValueBound> bound;                    // of the part that said how the case ended
  std::vector<std::vector<double>> unthrottled;       // per metric
  std::vector<uint32_t> throttled;                    // per metric
  std::vector<std::vector<bool>> throttled_in_order;  // per metric, each of its samples in order

  // The index of `spec` among the metrics, added when new.
  size_t MetricIndex(const MetricSpec& spec) {
    for (size_t i = 0; i < metrics.size(); ++i) {
      if (metrics[i].name == spec.name) return i;
    }
    metrics.push_back(spec);
    unthrottled.emplace_back();
    throttled.push_back(0);
    throttled_in_order.emplace_back();
    return metrics.size() - 1;
  }
};

// The cases joined by benchmark key; `order` receives the keys in the order
// they first appear. The last part that says how the case ended decides its
// status.
std::map<std::string, Joined> JoinCases(const std::vector<CaseResult>& cases,
                                        std::vector<std::string>& order) {
  std::map<std::string, Joined> joined;
  for (const CaseResult& c : cases) {
    const std::string key = c.benchmark.Key();
    auto [it, inserted] = joined.try_emplace(key);
    Joined& j = it->second;
    if (inserted) order.push_back(key);
    std::vector<size_t> at;
    for (const MetricSpec& spec : c.metrics) at.push_back(j.MetricIndex(spec));
    if (c.status != CaseStatus::kUnspecified) {
      j.status = c.status;
      j.reason = c.reason;
      j.bound = c.bound;
    }
    for (const Sample& sample : c.samples) {
      for (size_t m = 0; m < sample.values.size() && m < at.size(); ++m) {
        j.throttled_in_order[at[m]].push_back(sample.throttled);
        if (sample.throttled) {
          ++j.throttled[at[m]];
        } else {
          j.unthrottled[at[m]].push_back(sample.values[m]);
        }
      }
    }
  }
  return joined;
}

// Unthrottled samples of metric `m` per process: the blocks the gate
// counts. Empty (one process) unless `blocks` names more than one for the
// case.
CaseBlocks UnthrottledBlocks(const Joined& j, size_t m, const std::string& key,
                             const std::map<std::string, CaseBlocks>& blocks) {
  CaseBlocks out;
  if (auto it = blocks.find(key); it != blocks.end() && it->second.sizes.size() > 1) {
    const std::vector<bool>& in_order = j.throttled_in_order[m];
    size_t at = 0;
    for (unsigned n : it->second.sizes) {
      unsigned kept = 0;
      for (unsigned i = 0; i < n && at < in_order.size(); ++i, ++at) {
        if (!in_order[at]) ++kept;
      }
      out.sizes.push_back(kept);
    }
    out.rounds = it->second.rounds;
  }
  return out;
}

// The summary of metric `m` of a joined case over its unthrottled samples.
MetricSummary Summarize(const Joined& j, const std::string& key, size_t m) {
  const MetricSpec& spec = j.metrics[m];
  const stats::Summary st = stats::Summarize(j.unthrottled[m]);
  MetricSummary s;
  s.benchmark = key;
  s.metric = spec.name;
  s.unit = spec.unit;
  s.direction = spec.direction;
  s.n = st.n;
  s.n_throttled = j.throttled[m];
  s.median = st.median;
  s.mean = st.mean;
  s.stdev = st.stdev;
  s.min = st.min;
  s.max = st.max;
  s.noise = st.noise;
  s.mad = st.mad;
  s.p5 = st.p5;
  s.p95 = st.p95;
  s.median_ci_low = st.median_ci_low;
  s.median_ci_high = st.median_ci_high;
  s.status = j.status;
  s.reason = j.reason;
  // A bound counts only where no sample of its metric came.
  if (j.bound && j.bound->metric == spec.name && st.n == 0 && s.n_throttled == 0) s.bound = j.bound;
  return s;
}

}  // namespace

std::vector<double> ProcessMedians(const MetricData& m) {
  if (!internal::Usable(&m)) return {};
  if (m.process_medians) return *m.process_medians;
  size_t total = 0;
  for (unsigned n : m.block_sizes) total += n;
  std::vector<double> out;
  if (!m.block_sizes.empty() && total == m.samples.size() &&
      std::find(m.block_sizes.begin(), m.block_sizes.end(), 0u) == m.block_sizes.end()) {
    size_t at = 0;
    for (unsigned n : m.block_sizes) {
      out.push_back(stats::Median(std::span<const double>(m.samples.data() + at, n)));
      at += n;
    }
    return out;
  }
  if (m.blocks >= 2 && m.samples.size() >= m.blocks && m.samples.size() % m.blocks == 0) {
    const size_t size = m.samples.size() / m.blocks;
    for (size_t b = 0; b < m.blocks; ++b) {
      out.push_back(stats::Median(std::span<const double>(m.samples.data() + b * size, size)));
    }
    return out;
  }
  return {m.summary.median};
}

RunData RunDataFromCases(const std::string& run_id, const std::vector<CaseResult>& cases,
                         const std::map<std::string, CaseBlocks>& blocks) {
  std::vector<std::string> order;
  std::map<std::string, Joined> joined = JoinCases(cases, order);
  RunData run;
  run.run_id = run_id;
  for (const std::string& key : order) {
    Joined& j = joined.at(key);
    for (size_t m = 0; m < j.metrics.size(); ++m) {
      const CaseBlocks processes = UnthrottledBlocks(j, m, key, blocks);
      MetricData d;
      d.summary = Summarize(j, key, m);
      d.samples = std::move(j.unthrottled[m]);
      d.block_sizes = processes.sizes;
      d.rounds = processes.rounds;
      run.metrics.push_back(std::move(d));
    }
  }
  return run;
}

}  // namespace perfgate::gate
