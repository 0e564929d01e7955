// `perfgate health`: the coordinator's grpc.health.v1 status.
#include <iostream>

#include "cli/command_support.h"
#include "cli/commands.h"

namespace perfgate::cli {

int HealthCommand(const Config& c) {
  // A coordinator still starting is waited for, up to --timeout.
  client::CoordinatorClient coordinator(CoordinatorOptions(c));
  auto status = coordinator.Health();
  if (!status.ok()) return RpcError(status.status(), "health", c.coordinator);
  std::cout << c.coordinator << ": " << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(*status)
            << "\n";
  return *status == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

}  // namespace perfgate::cli
