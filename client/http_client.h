// The client of the coordinator's HTTP API (docs/dashboard.md): JSON in and
// out over cpp-httplib, plain or HTTPS (the gRPC client's TLS options: its
// CA, its client certificate, its server name), the caller's bearer token on
// every call, one deadline a call. `perfgate regressions`, `perfgate
// triage` and `perfgate bisect` use it.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "client/coordinator_client.h"
#include "google/protobuf/message.h"
#include "nlohmann/json.hpp"

namespace perfgate::client {

struct HttpClientOptions {
  std::string address = "127.0.0.1:8080";  // host:port of --http-listen
  std::string token;                       // sent as "Authorization: Bearer <token>" when set
  ClientTls tls;                           // HTTPS when enabled; the server's certificate is verified
  double timeout_s = 60;
};

/// GET path (with its query); the answer's JSON, or the API's error with
/// the HTTP status mapped back to a status code (401: UNAUTHENTICATED,
/// 403: PERMISSION_DENIED, the message the coordinator's). A failed TLS
/// handshake is UNAVAILABLE with OpenSSL's reason.
absl::StatusOr<nlohmann::json> HttpGet(const HttpClientOptions& options, const std::string& path);
/// POST body to path.
absl::StatusOr<nlohmann::json> HttpPost(const HttpClientOptions& options, const std::string& path,
                                        const nlohmann::json& body);
/// GET path into `answer`, a resource whose message is in proto/ (read
/// from the API's JSON, wire/api_json.h); the errors of HttpGet, and
/// INTERNAL when the answer is not that message.
absl::Status HttpGetMessage(const HttpClientOptions& options, const std::string& path,
                            google::protobuf::Message* answer);
/// POST `body` in the API's JSON to path, its answer into `answer`.
absl::Status HttpPostMessage(const HttpClientOptions& options, const std::string& path,
                             const google::protobuf::Message& body, google::protobuf::Message* answer);
/// A query string component, percent-encoded.
std::string UrlEncode(const std::string& value);

}  // namespace perfgate::client
