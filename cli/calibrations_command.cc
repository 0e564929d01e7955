// `perfgate calibrations`: the nodes' stored noise floors, rendered against
// the policy's tolerance and calibration_max_age (calibrations.h).
#include <iostream>

#include "cli/calibrations.h"
#include "cli/command_support.h"
#include "cli/commands.h"

namespace perfgate::cli {

int CalibrationsCommand(const Config& c) {
  v1::ListCalibrationsRequest req;
  req.set_sku(c.sku);
  req.set_node(c.node);
  client::CoordinatorClient coordinator(CoordinatorOptions(c));
  auto resp = coordinator.ListCalibrations(req);
  if (!resp.ok()) return RpcError(resp.status(), "calibrations", c.coordinator);
  std::cout << RenderCalibrations(*resp, c.policy.policy);
  return kExitPass;
}

}  // namespace perfgate::cli
