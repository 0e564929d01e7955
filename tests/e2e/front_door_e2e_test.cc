// The coordinator's front doors over real processes and raw sockets: how
// the HTTP port frames a request whose length is ambiguous (RFC 9112 §6.3),
// how its connections are shared between client addresses, that neither
// port is shared with another process, and that tokens are not served in
// clear beyond loopback unless asked for.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/support/coordinator.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"
#include "tests/support/raw_http.h"

namespace perfgate::front_door_e2e_test {
namespace {

using ::testing::HasSubstr;
using testing::Bin;
using testing::RawConnection;

class FrontDoorEndToEnd : public testing::PostgresDirTest {
 protected:
  // Starts the coordinator with HTTP on a free port.
  void Start(std::vector<std::string> extra = {}) {
    extra.insert(extra.end(), {"--http-listen", "127.0.0.1:0"});
    auto started = testing::StartCoordinator(ConnInfo(), dir_->Join("coordinator.log"), extra);
    ASSERT_TRUE(started.ok()) << started.status();
    coordinator_ = std::move(started->process);
    std::smatch m;
    const std::string log = coordinator_->Output();
    ASSERT_TRUE(std::regex_search(log, m, std::regex(R"(dashboard at http://127\.0\.0\.1:(\d+)/)"))) << log;
    port_ = std::stoi(m[1]);
  }

  // `perfgate-coordinator serve ARGS...` run to its end (it must not start).
  testing::CommandResult Serve(const std::vector<std::string>& args, const std::string& database) {
    std::vector<std::string> argv = {Bin("coordinator/perfgate-coordinator"), "--database", database, "serve"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = testing::RunCommand(argv, {}, std::chrono::seconds(30));
    EXPECT_TRUE(r.ok()) << r.status() << " (did it start on a port already in use?)";
    return r.ok() ? *r : testing::CommandResult{};
  }

  std::unique_ptr<testing::ChildProcess> coordinator_;
  int port_ = 0;
};

// How many answers a raw exchange got: each begins with a status line.
int Answers(const std::string& received) {
  int n = 0;
  for (size_t at = received.find("HTTP/1.1 "); at != std::string::npos; at = received.find("HTTP/1.1 ", at + 1)) {
    ++n;
  }
  return n;
}

// A request's length given two ways: whichever the server took, a proxy in
// front could take the other, and the rest of the body would be read as a
// second request (request smuggling). Each is answered 400 once and the
// connection closed; the same length given twice is one length.
TEST_F(FrontDoorEndToEnd, AnAmbiguousContentLengthIsAnsweredOnce400AndTheConnectionClosed) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string smuggled = "GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n";
  const std::string n = std::to_string(smuggled.size());
  const std::vector<std::string> ambiguous = {
      "GET /healthz HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nContent-Length: " + n + "\r\n\r\n" + smuggled,
      "POST /api/v1/regressions/1/triage HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
      "Content-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled,
      "GET /healthz HTTP/1.1\r\nHost: h\r\nContent-Length: 0, " + n + "\r\n\r\n" + smuggled,
      "GET /healthz HTTP/1.1\r\nHost: h\r\nContent-Length: +0\r\n\r\n" + smuggled,
  };
  for (const std::string& request : ambiguous) {
    RawConnection conn(port_);
    ASSERT_TRUE(conn.connected());
    ASSERT_TRUE(conn.Send(request));
    conn.FinishSending();
    bool closed = false;
    const std::string received = conn.ReceiveUntilClosed(std::chrono::seconds(10), &closed);
    EXPECT_TRUE(closed) << request;
    EXPECT_EQ(received.rfind("HTTP/1.1 400", 0), 0u) << request << "\n---\n" << received;
    EXPECT_EQ(Answers(received), 1) << request << "\n---\n" << received;
    EXPECT_THAT(received, HasSubstr(R"({"error":"Content-Length)")) << received;
  }
  RawConnection same(port_);
  ASSERT_TRUE(same.Send("GET /healthz HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nContent-Length: 0\r\n"
                        "Connection: close\r\n\r\n"));
  bool closed = false;
  const std::string received = same.ReceiveUntilClosed(std::chrono::seconds(10), &closed);
  EXPECT_EQ(received.rfind("HTTP/1.1 200", 0), 0u) << received;
}

// 65 idle sockets from one address used to take all 64 places of the HTTP
// port: /healthz and the dashboard answered 503 to everyone for as long as
// they were held. Now one address holds at most 16; its 17th socket on is
// answered 503 naming the cap, and another address is served.
TEST_F(FrontDoorEndToEnd, OneAddressHoldingIdleSocketsDoesNotShutTheDashboardToAnother) {
  ASSERT_NO_FATAL_FAILURE(Start());
  constexpr int kHeld = 65, kPerAddress = 16;
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < kHeld; ++i) {
    held.push_back(std::make_unique<RawConnection>(port_, "127.0.0.2"));
    ASSERT_TRUE(held.back()->connected()) << "socket " << i << " from 127.0.0.2";
  }
  // Accepted in the order they connected, so these come after all 65, and
  // they must be answered while those are held, not once the idle ones
  // have been dropped (5 s).
  httplib::Client other("127.0.0.1", port_);
  other.set_connection_timeout(10);
  other.set_read_timeout(10);
  for (const char* path : {"/healthz", "/"}) {
    auto res = other.Get(path);
    ASSERT_TRUE(res) << path << ": " << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200) << path << ": " << res->body;
  }
  for (int i = 0; i < kPerAddress; ++i) EXPECT_TRUE(held[i]->Quiet()) << "socket " << i << " was let go first";
  // Within the 5 s an idle socket is kept, every one past the cap was refused.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int refused = 0;
  for (int i = kPerAddress; i < kHeld; ++i) {
    const auto left = std::max(std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                                  deadline - std::chrono::steady_clock::now()));
    bool closed = false;
    const std::string answer = held[i]->ReceiveUntilClosed(left, &closed);
    if (answer.rfind("HTTP/1.1 503", 0) == 0) ++refused;
    if (i == kHeld - 1) {
      EXPECT_THAT(answer, HasSubstr("too many connections from 127.0.0.2 (16 per address)"));
    }
  }
  EXPECT_EQ(refused, kHeld - kPerAddress);
}

// A socket held like another coordinator's (SO_REUSEPORT set): gRPC sets
// that option by default and cpp-httplib always did, so a second
// coordinator used to start beside the first and split its connections.
int HoldPortLikeAnotherServer() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 8) != 0) return -1;
  return fd;
}

int PortOf(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

TEST_F(FrontDoorEndToEnd, ACoordinatorOnAPortAlreadyInUseRefusesToStartNamingThePort) {
  const int fd = HoldPortLikeAnotherServer();
  ASSERT_GE(fd, 0);
  const std::string port = std::to_string(PortOf(fd));
  testing::CommandResult grpc = Serve({"--listen", "127.0.0.1:" + port}, ConnInfo());
  EXPECT_EQ(grpc.exit_code, 2) << grpc.output;
  EXPECT_THAT(grpc.output, HasSubstr("port " + port + " on 127.0.0.1 is already in use"));
  testing::CommandResult http = Serve({"--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:" + port}, ConnInfo());
  EXPECT_EQ(http.exit_code, 2) << http.output;
  EXPECT_THAT(http.output, HasSubstr("HTTP (--http-listen): port " + port + " on 127.0.0.1 is already in use"));
  close(fd);
}

// Tokens cross the network in clear without TLS, and plaintext gRPC reads a
// whole message before it checks one: refused beyond loopback unless asked
// for. The check comes before the database is touched; with
// --allow-plaintext the start goes on to it (an unreachable one here).
TEST_F(FrontDoorEndToEnd, TokensInClearBeyondLoopbackAreRefusedUnlessAllowed) {
  const std::string nowhere = "host=127.0.0.1 port=1 connect_timeout=2";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--require-credentials", "--listen", "0.0.0.0:0"},
           {"--token-file", WriteTokenFile("s3cret-s3cret-s3cret"), "--listen", "127.0.0.1:0", "--http-listen",
            "0.0.0.0:0"}}) {
    testing::CommandResult r = Serve(args, nowhere);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("tokens would be sent in clear to 0.0.0.0:0"));
    EXPECT_THAT(r.output, HasSubstr("--allow-plaintext"));
    std::vector<std::string> allowed = args;
    allowed.push_back("--allow-plaintext");
    r = Serve(allowed, nowhere);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("cannot reach the database"));
  }
  testing::CommandResult loopback = Serve({"--require-credentials", "--listen", "127.0.0.1:0"}, nowhere);
  EXPECT_THAT(loopback.output, HasSubstr("cannot reach the database"));
}

}  // namespace
}  // namespace perfgate::front_door_e2e_test
