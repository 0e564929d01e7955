// What the commands of `perfgate` share (exit codes: common/exit_codes.h): the
// coordinator's client options, and how a failed call, an unreadable answer
// and an extra output file are told, and a change shown as a signed percent.
#pragma once

#include <string>


#include "absl/status/status.h"
#include "cli/config.h"
#include "client/coordinator_client.h"
#include "client/http_client.h"
#include "common/exit_codes.h"

namespace perfgate::cli {

/// The coordinator's client: the address, the token of --token-file, the
/// TLS options, and each call ending by --timeout (read by ValidateConfig).
client::ClientOptions CoordinatorOptions(const Config& config);

/// The client of the coordinator's HTTP API (--http) with the token and
/// TLS options ValidateConfig read.
client::HttpClientOptions HttpOptions(const Config& config);

/// Tells a failed HTTP API call on stderr ("perfgate: <what>: ...", with a
/// hint for a refused credential); returns kExitError.
int HttpError(const absl::Status& s, const char* what);

/// Tells a failed call on stderr ("perfgate: <call> failed: ...", with a hint
/// when nothing listens at `address`); returns kExitError.
int RpcError(const absl::Status& s, const char* call, const std::string& address);

/// Tells on stderr that the coordinator answered with something this command
/// cannot read (a newer coordinator's verdict, a malformed message); returns
/// kExitError.
int BadAnswer(const absl::Status& s, const char* call);

/// Writes `text` to `path` (nothing when the path is empty); false, told on
/// stderr, when it cannot.
bool WriteFile(const std::string& path, const std::string& text);

/// A fraction of the coordinator's answer as a signed percent ("+12.3 %"),
/// "?" where it was not measured (an unset field).
std::string SignedPercent(bool measured, double v);

}  // namespace perfgate::cli
