#include "client/http_client.h"

#include <httplib.h>

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace perfgate::client {
namespace {

absl::StatusCode FromHttp(int status) {
  switch (status) {
    case 400: return absl::StatusCode::kInvalidArgument;
    case 401: return absl::StatusCode::kUnauthenticated;
    case 403: return absl::StatusCode::kPermissionDenied;
    case 404: return absl::StatusCode::kNotFound;
    case 409: return absl::StatusCode::kFailedPrecondition;
    case 503: return absl::StatusCode::kUnavailable;
    default: return absl::StatusCode::kInternal;
  }
}

absl::StatusOr<httplib::Client> Connect(const HttpClientOptions& o) {
  const size_t colon = o.address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(o.address.substr(colon + 1), &port) || port <= 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("--http: '", o.address, "' is not host:port"));
  }
  httplib::Client c(o.address.substr(0, colon), port);
  const auto seconds = static_cast<time_t>(o.timeout_s);
  const auto micros = static_cast<time_t>((o.timeout_s - std::floor(o.timeout_s)) * 1e6);
  c.set_connection_timeout(seconds, micros);
  c.set_read_timeout(seconds, micros);
  c.set_write_timeout(seconds, micros);
  return c;
}

absl::StatusOr<nlohmann::json> Answer(const HttpClientOptions& o, const httplib::Result& res) {
  if (!res) {
    return absl::UnavailableError(absl::StrCat("cannot reach the coordinator's HTTP API at ", o.address, ": ",
                                               httplib::to_string(res.error()),
                                               " (is it started with --http-listen?)"));
  }
  nlohmann::json body = nlohmann::json::parse(res->body, nullptr, false);
  if (res->status != 200) {
    const std::string message = body.is_object() && body.contains("error") && body["error"].is_string()
                                    ? body["error"].get<std::string>()
                                    : res->body;
    return absl::Status(FromHttp(res->status), message);
  }
  if (body.is_discarded()) return absl::InternalError("the coordinator answered something that is not JSON");
  return body;
}

}  // namespace

absl::StatusOr<nlohmann::json> HttpGet(const HttpClientOptions& options, const std::string& path) {
  auto c = Connect(options);
  if (!c.ok()) return c.status();
  return Answer(options, c->Get(path.c_str()));
}

absl::StatusOr<nlohmann::json> HttpPost(const HttpClientOptions& options, const std::string& path,
                                        const nlohmann::json& body) {
  auto c = Connect(options);
  if (!c.ok()) return c.status();
  httplib::Headers headers;
  if (!options.token.empty()) headers.emplace("Authorization", "Bearer " + options.token);
  return Answer(options, c->Post(path.c_str(), headers, body.dump(), "application/json"));
}

std::string UrlEncode(const std::string& value) { return httplib::detail::encode_query_param(value); }

}  // namespace perfgate::client
