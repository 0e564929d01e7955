#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

#include "common/exit_codes.h"
#include "coordinator/commands.h"
#include "coordinator/domain/credentials.h"

namespace perfgate::coordinator {
namespace {

// Writes the token to a file only its owner may read, which must not exist yet.
absl::Status WriteTokenFile(const std::string& path, const std::string& token) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return absl::InvalidArgumentError(path + ": " + std::strerror(errno));
  const std::string line = token + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  if (::close(fd) != 0 || !ok) return absl::InternalError(path + ": cannot write the token");
  return absl::OkStatus();
}

int Credentials(const CoordinatorConfig& c, Store& store) {
  if (c.credentials == CredentialsAction::kIssue) {
    auto issued = IssueCredential(store, c.name, ParseRole(c.role).value());
    if (!issued.ok()) return Fail(issued.status(), "cannot issue the credential");
    if (!c.output.empty()) {
      if (auto s = WriteTokenFile(c.output, issued->token); !s.ok()) {
        RevokeCredential(store, issued->credential.key_id).IgnoreError();
        return Fail(s, "cannot write --output (the credential was revoked again)");
      }
    } else {
      std::cout << issued->token << std::endl;
    }
    std::cerr << "perfgate-coordinator: issued credential '" << c.name << "', role " << c.role << ", key id "
              << issued->credential.key_id << "; its token is shown only this once\n";
    return perfgate::kExitPass;
  }
  if (c.credentials == CredentialsAction::kRevoke) {
    auto n = RevokeCredential(store, c.name);
    if (!n.ok()) return Fail(n.status(), "cannot revoke");
    std::cerr << "perfgate-coordinator: revoked " << *n << " credential(s)\n";
    return perfgate::kExitPass;
  }
  auto all = ListCredentials(store);
  if (!all.ok()) return Fail(all.status(), "cannot list credentials");
  std::cout << "key_id\tname\trole\tissued\trevoked\n";
  for (const Credential& k : *all) {
    std::cout << k.key_id << "\t" << k.name << "\t" << RoleName(k.role) << "\t" << UtcTime(k.created_at) << "\t"
              << (k.revoked_at ? UtcTime(*k.revoked_at) : std::string("-")) << "\n";
  }
  return perfgate::kExitPass;
}

}  // namespace

int CredentialsCommand(const CoordinatorConfig& config) {
  int version = 0;
  auto store = OpenStore(config, &version);
  if (!store.ok()) return kExitError;
  return Credentials(config, **store);
}

}  // namespace perfgate::coordinator
