#include "coordinator/process_medians.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace perfgate::coordinator {

bool HasProcessBlocks(const RunDetails& details) {
  return std::any_of(details.begin(), details.end(),
                     [](const auto& kv) { return absl::StartsWith(kv.first, "ab_blocks"); });
}

gate::CaseBlocks StoredBlocks(const RunDetails& details, const std::string& benchmark) {
  gate::CaseBlocks out;
  if (auto it = details.find("ab_blocks:" + benchmark); it != details.end()) {
    for (absl::string_view part : absl::StrSplit(it->second, ',')) {
      unsigned n = 0;
      if (!absl::SimpleAtoi(part, &n) || n == 0) return {};
      out.sizes.push_back(n);
    }
    out.rounds = true;
    return out;
  }
  unsigned blocks = 0;
  if (auto it = details.find("ab_blocks");
      it != details.end() && absl::SimpleAtoi(it->second, &blocks) && blocks > 1) {
    out.sizes.assign(blocks, 0);  // equal blocks; sizes filled from the sample count
    out.rounds = true;
  }
  return out;
}

void SetStoredBlocks(const RunDetails& details, const std::string& benchmark, gate::MetricData& m) {
  const gate::CaseBlocks blocks = StoredBlocks(details, benchmark);
  if (!blocks.sizes.empty() && blocks.sizes.front() == 0) {
    m.blocks = static_cast<unsigned>(blocks.sizes.size());
  } else {
    m.block_sizes = blocks.sizes;
  }
  m.rounds = blocks.rounds;
}

std::vector<double> ComputeProcessMedians(const RunDetails& details, const std::string& benchmark,
                                          std::vector<double> samples, uint32_t n, double median) {
  gate::MetricData m;
  // Usable as far as the samples go; the gate checks the case's status
  // itself before it takes these medians.
  m.summary.status = CaseStatus::kOk;
  m.summary.n = n;
  m.summary.median = median;
  m.samples = std::move(samples);
  SetStoredBlocks(details, benchmark, m);
  return gate::ProcessMedians(m);
}

}  // namespace perfgate::coordinator
