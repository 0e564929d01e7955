// The client of the coordinator's HTTP API (docs/dashboard.md): JSON in and
// out over cpp-httplib, the bearer token on writes, one deadline a call.
// `perfgate regressions` and `perfgate triage` use it.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace perfgate::client {

struct HttpClientOptions {
  std::string address = "127.0.0.1:8080";  // host:port of --http-listen
  std::string token;                       // sent on writes when set
  double timeout_s = 60;
};

/// GET path (with its query); the answer's JSON, or the API's error with
/// the HTTP status mapped back to a status code.
absl::StatusOr<nlohmann::json> HttpGet(const HttpClientOptions& options, const std::string& path);
/// POST body to path.
absl::StatusOr<nlohmann::json> HttpPost(const HttpClientOptions& options, const std::string& path,
                                        const nlohmann::json& body);
/// A query string component, percent-encoded.
std::string UrlEncode(const std::string& value);

}  // namespace perfgate::client
