#include "tests/support/tls.h"

#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/support/processes.h"

namespace perfgate::testing {
namespace {

absl::Status OpenSsl(std::vector<std::string> args) {
  args.insert(args.begin(), "openssl");
  auto r = RunCommand(args);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat(absl::StrJoin(args, " "), " exited ", r->exit_code, ":\n", r->output));
  }
  return absl::OkStatus();
}

// A self-signed CA certificate and its key.
absl::Status MakeCa(const std::string& dir, const std::string& name) {
  return OpenSsl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                  dir + "/" + name + ".key", "-out", dir + "/" + name + ".pem", "-days", "1", "-subj",
                  "/CN=perfgate test " + name, "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                  "keyUsage=critical,keyCertSign,cRLSign"});
}

// A leaf key and certificate signed by the CA `ca`, with the extensions in `ext`.
absl::Status MakeLeaf(const std::string& dir, const std::string& name, const std::string& cn,
                      const std::string& ext, const std::string& ca) {
  const std::string ext_file = dir + "/" + name + ".ext";
  std::ofstream(ext_file) << ext << "\n";
  if (auto s = OpenSsl({"req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                        dir + "/" + name + ".key", "-out", dir + "/" + name + ".csr", "-subj", "/CN=" + cn});
      !s.ok()) {
    return s;
  }
  return OpenSsl({"x509", "-req", "-in", dir + "/" + name + ".csr", "-CA", dir + "/" + ca + ".pem", "-CAkey",
                  dir + "/" + ca + ".key", "-set_serial", name == "server" ? "2" : "3", "-days", "1", "-out",
                  dir + "/" + name + ".pem", "-extfile", ext_file});
}

}  // namespace

absl::StatusOr<TestPki> MakeTestPki(const std::string& dir) {
  if (auto s = MakeCa(dir, "ca"); !s.ok()) return s;
  if (auto s = MakeCa(dir, "other-ca"); !s.ok()) return s;
  if (auto s = MakeLeaf(dir, "server", "localhost",
                        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth", "ca");
      !s.ok()) {
    return s;
  }
  if (auto s = MakeLeaf(dir, "client", "perfgate-test-client", "extendedKeyUsage=clientAuth", "ca"); !s.ok()) {
    return s;
  }
  return TestPki{dir + "/ca.pem",     dir + "/server.pem", dir + "/server.key",
                 dir + "/client.pem", dir + "/client.key", dir + "/other-ca.pem"};
}

}  // namespace perfgate::testing
