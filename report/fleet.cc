#include "report/fleet.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace perfgate::report {
namespace {

// An absent value is shown as "-" so that "pcie_gen_max=- (fleet: 5)" still reads.
std::string Shown(const std::string& value) { return value.empty() ? "-" : value; }

std::string Differences(const gate::FleetOutlier& o) {
  if (o.differing_fields.empty()) return "-";
  std::string out;
  for (const gate::FieldDifference& d : o.differing_fields) {
    if (!out.empty()) out += ", ";
    absl::StrAppend(&out, d.name, "=", Shown(d.node_value), " (fleet: ", Shown(d.majority_value), ")");
  }
  return out;
}

std::string WithUnit(double x, const std::string& unit) {
  std::string text = absl::StrFormat("%.4g", x);
  if (!unit.empty()) absl::StrAppend(&text, " ", unit);
  return text;
}

}  // namespace

std::string RenderFleet(const gate::FleetReport& fleet, const std::string& sku, const std::string& sweep) {
  std::string out = absl::StrFormat("%d nodes of %s in sweep %s, outliers beyond %g MADs of the fleet median\n",
                                    fleet.nodes, sku, sweep, fleet.k);
  if (fleet.nodes < 3) {
    absl::StrAppend(&out, "fewer than 3 nodes: nothing to compare\n");
  }
  if (fleet.outliers.empty()) {
    absl::StrAppend(&out, "no outliers\n");
  } else {
    absl::StrAppend(&out, absl::StrFormat("\n%-16s  %-40s  %-10s  %14s  %14s  %9s  %-6s  %s\n", "node", "benchmark",
                                          "metric", "node median", "fleet median", "MADs", "side", "differs in"));
    for (const gate::FleetOutlier& o : fleet.outliers) {
      absl::StrAppend(&out, absl::StrFormat("%-16s  %-40s  %-10s  %14s  %14s  %+9.1f  %-6s  %s\n", o.node,
                                            o.benchmark, o.metric, WithUnit(o.node_median, o.unit),
                                            WithUnit(o.fleet_median, o.unit), o.deviation, gate::ToString(o.side),
                                            Differences(o)));
    }
  }
  if (!fleet.node_summary.empty()) out += "\n";
  for (const gate::FleetNode& n : fleet.node_summary) {
    absl::StrAppend(&out, absl::StrFormat("%-16s  %d worse, %d better  (run %s)\n", n.node, n.worse, n.better,
                                          n.run_id));
  }
  return out;
}

int FleetExitCode(const gate::FleetReport& fleet) { return fleet.AnyWorse() ? 1 : 0; }

}  // namespace perfgate::report
