// The ctest fixture `shared_postgres` (tests/CMakeLists.txt): one PostgreSQL
// server for the whole test run, in which each test of the binaries that ask
// for it makes its own database (PostgresTest).
//   perfgate_test_postgres start DIR   starts it in DIR/ctest-<ctest pid> (stopping those runs that
//                                      ended left there)
//   perfgate_test_postgres stop DIR    stops this run's and removes its folder
#include <iostream>
#include <string>

#include "tests/support/postgres.h"

int main(int argc, char** argv) {
  const std::string verb = argc == 3 ? argv[1] : "";
  if (verb != "start" && verb != "stop") {
    std::cerr << "usage: perfgate_test_postgres start|stop DIR\n";
    return 2;
  }
  const std::string dir = argv[2];
  const absl::Status done = verb == "start" ? perfgate::testing::PostgresServer::StartDetached(dir)
                                            : perfgate::testing::PostgresServer::StopDetached(dir);
  if (!done.ok()) {
    std::cerr << "perfgate_test_postgres " << verb << " " << dir << ": " << done.message() << "\n";
    return 1;
  }
  std::cout << (verb == "start" ? "the shared PostgreSQL server runs in " : "stopped and removed ")
            << perfgate::testing::PostgresServer::RunFolder(dir) << "\n";
  return 0;
}
