// `perfgate fleet`: the nodes of one SKU in one sweep whose medians lie beyond
// k × MAD of the fleet's, with the environment fields they differ in.
#pragma once

#include <string>

#include "gate/fleet.h"

namespace perfgate::report {

/// A line naming the nodes compared and k; one table row per outlier (node,
/// benchmark, metric, node median, fleet median, deviation in MADs,
/// worse/better, differing fields as "pcie_gen_max=4 (fleet: 5)"); then one
/// line per node with its outlier counts. Ends with a newline.
std::string RenderFleet(const gate::FleetReport& fleet, const std::string& sku, const std::string& sweep);

/// The command's exit status for a comparison: 1 when some node is an
/// outlier on the worse side, else 0.
int FleetExitCode(const gate::FleetReport& fleet);

}  // namespace perfgate::report
