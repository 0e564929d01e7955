#include "cli/calibrations.h"

#include <map>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gate/calibration.h"
#include "wire/convert.h"

namespace perfgate::cli {
namespace {

std::string Percent(double fraction) { return absl::StrFormat("%.2f %%", fraction * 100); }

using NodeKey = std::pair<std::string, std::string>;  // (sku, node)

// Per node, the environment of its newest calibration: the one its runs
// are most likely measured in now.
std::map<NodeKey, std::string> NewestEnvironments(const v1::ListCalibrationsResponse& response) {
  std::map<NodeKey, std::pair<TimePoint, std::string>> newest;
  for (const v1::StoredCalibration& c : response.calibrations()) {
    const TimePoint at = wire::FromProto(c.measured_at());
    auto [it, inserted] = newest.try_emplace({c.sku(), c.node()}, at, c.environment_hash());
    if (!inserted && at > it->second.first) it->second = {at, c.environment_hash()};
  }
  std::map<NodeKey, std::string> out;
  for (const auto& [key, value] : newest) out[key] = value.second;
  return out;
}

}  // namespace

std::string RenderCalibrations(const v1::ListCalibrationsResponse& response, const gate::Policy& policy) {
  std::ostringstream out;
  if (response.calibrations().empty()) {
    out << "no calibrations stored; `perfgate-agent calibrate` on a node measures them\n";
    return out.str();
  }
  const TimePoint now = wire::FromProto(response.now());
  const double max_age_days = static_cast<double>(policy.calibration_max_age.count()) / 86400.0;
  const std::map<NodeKey, std::string> current = NewestEnvironments(response);
  NodeKey shown;
  size_t stale = 0, fit = 0;
  for (const v1::StoredCalibration& c : response.calibrations()) {
    const NodeKey node{c.sku(), c.node()};
    if (node != shown) {
      out << absl::StrFormat("\nnode %s (sku %s)\n", c.node(), c.sku());
      out << absl::StrFormat("  %-44s %-12s %9s %9s %6s %-12s %12s %9s  %-8s %s\n", "benchmark",
                             "metric", "spread", "processes", "age", "environment", "single-run",
                             "tolerance", "fit", "state");
      shown = node;
    }
    const v1::CalibrationEntry& e = c.entry();
    const TimePoint at = wire::FromProto(c.measured_at());
    const double tolerance = policy.Resolve(c.sku(), e.benchmark(), e.metric()).tolerance;
    const bool is_fit = gate::FitToGate(e.spread(), e.processes(), tolerance);
    std::string state;
    if (now - at > policy.calibration_max_age) {
      state = absl::StrCat("stale (older than ", max_age_days, " d; not used)");
      ++stale;
    } else if (c.environment_hash() != current.at(node)) {
      state = "other environment (used only for runs in it)";
    }
    fit += is_fit && state.empty() ? 1 : 0;
    out << absl::StrFormat("  %-44s %-12s %9s %9d %5dd %-12s %12s %9s  %-8s %s\n", e.benchmark(),
                           e.metric(), Percent(e.spread()), e.processes(), gate::AgeDays(at, now),
                           c.environment_hash().substr(0, 12),
                           "±" + Percent(gate::SingleRunHalfWidth(e.spread(), e.processes())),
                           Percent(tolerance), is_fit ? "fit" : "not fit", state);
  }
  out << absl::StrFormat(
      "\n%d calibrations, %d stale; %d current ones fit to gate single runs at the policy's "
      "tolerance (fit: t(0.975, processes-1) × spread × √2 within it)\n",
      response.calibrations_size(), stale, fit);
  return out.str();
}

}  // namespace perfgate::cli
