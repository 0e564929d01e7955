// The processes behind a stored run's samples: how a side of
// `perfgate-agent ab` divided them (its run details), and the medians of
// those processes, which the gate counts. CloseRun computes the medians
// once and stores them with the summaries (summaries.process_medians), so
// a gate of such runs reads no samples.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/run_types.h"
#include "gate/gate.h"

namespace perfgate::coordinator {

using RunDetails = std::map<std::string, std::string>;

/// Whether the run's samples came from several processes: its details
/// name "ab_blocks" or "ab_blocks:KEY".
bool HasProcessBlocks(const RunDetails& details);

/// How the run divided the samples of case `benchmark` into processes: per
/// case "ab_blocks:KEY" = the sample count of each block (comma-separated),
/// else one "ab_blocks" = N equal blocks for every case (sizes all 0,
/// filled from the sample count). Empty for a run of one process.
gate::CaseBlocks StoredBlocks(const RunDetails& details, const std::string& benchmark);

/// Sets the blocks of `m` (a metric of case `benchmark`) from the details.
void SetStoredBlocks(const RunDetails& details, const std::string& benchmark, gate::MetricData& m);

/// The medians of the processes behind one metric of a run with process
/// blocks: gate::ProcessMedians over its unthrottled samples in sample
/// order, for a summary of `n` samples with median `median`. What the gate
/// computes from the samples, computed when the run is closed.
std::vector<double> ComputeProcessMedians(const RunDetails& details, const std::string& benchmark,
                                          std::vector<double> samples, uint32_t n, double median);

}  // namespace perfgate::coordinator
