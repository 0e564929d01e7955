#include "cli/command_support.h"

#include <fstream>
#include <iostream>

#include "absl/strings/str_format.h"

namespace perfgate::cli {

client::ClientOptions CoordinatorOptions(const Config& config) { return config.client; }

int RpcError(const absl::Status& s, const char* call, const std::string& address) {
  std::cerr << "perfgate: " << call << " failed: " << s.message();
  if (s.code() == absl::StatusCode::kUnavailable) {
    std::cerr << " (is a coordinator listening on " << address << "? set --coordinator or PERFGATE_COORDINATOR)";
  }
  std::cerr << "\n";
  return kExitError;
}

int BadAnswer(const absl::Status& s, const char* call) {
  std::cerr << "perfgate: " << call << ": the coordinator's answer cannot be read: " << s.message() << "\n";
  return kExitError;
}

bool WriteFile(const std::string& path, const std::string& text) {
  if (path.empty()) return true;
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "perfgate: cannot write " << path << "\n";
    return false;
  }
  return true;
}

client::HttpClientOptions HttpOptions(const Config& c) {
  return client::HttpClientOptions{c.http, c.client.token, c.client.tls, c.timeout_s};
}

int HttpError(const absl::Status& s, const char* what) {
  std::cerr << "perfgate: " << what << ": " << s.message();
  if (absl::IsUnauthenticated(s)) std::cerr << " (refused: give --token-file with a credential's token)";
  if (absl::IsPermissionDenied(s)) std::cerr << " (refused: the credential's role does not allow it)";
  std::cerr << "\n";
  return kExitError;
}

std::string SignedPercent(bool measured, double v) {
  return measured ? absl::StrFormat("%+.1f %%", 100 * v) : std::string("?");
}

}  // namespace perfgate::cli
