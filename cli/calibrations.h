// `perfgate calibrations`: the noise floors stored for a fleet's nodes, per
// node and case, with their age and whether each case is fit to gate single
// runs at the policy's tolerance (docs/calibration.md).
#pragma once

#include <string>

#include "gate/policy.h"
#include "perfgate/v1/query.pb.h"

namespace perfgate::cli {

/// One block per SKU and node, one row per case and metric: spread,
/// processes, age in days, environment (hash prefix), the single-run 95 %
/// half-width, fit or not fit at the policy's tolerance, and a state:
/// "stale" when older than the policy's calibration_max_age (a gate then
/// ignores it) or "other environment" when the node has a newer calibration
/// in another environment (a gate uses the one matching its run). Ages are
/// told against the response's `now`. Ends with a newline.
std::string RenderCalibrations(const v1::ListCalibrationsResponse& response, const gate::Policy& policy);

}  // namespace perfgate::cli
