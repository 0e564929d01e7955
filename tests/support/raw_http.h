// A raw TCP connection to an HTTP port, for requests no well-behaved client
// sends (a client library would normalise them): duplicated headers, bodies
// that do not match their length, sockets held open and idle.
#pragma once

#include <chrono>
#include <string>

namespace perfgate::testing {

class RawConnection {
 public:
  /// Connects to 127.0.0.1:`port` from the loopback address `from` (all of
  /// 127/8 is local, so a test can be several clients).
  explicit RawConnection(int port, const std::string& from = "127.0.0.1");
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  /// True when the connection was made.
  bool connected() const { return connected_; }
  /// Sends all of `data`; false once the server has closed the connection.
  bool Send(const std::string& data);
  /// What arrives within `timeout`, up to the end of the first answer's
  /// headers; empty when nothing does.
  std::string Receive(std::chrono::milliseconds timeout);
  /// Everything that arrives until the server closes the connection, or
  /// until `timeout` (then `closed` is false).
  std::string ReceiveUntilClosed(std::chrono::milliseconds timeout, bool* closed);
  /// True when the server closes the connection within `timeout`.
  bool ClosedWithin(std::chrono::milliseconds timeout);
  /// True while nothing has come from the server, not even its close.
  bool Quiet() const;
  /// Tells the server nothing more will be sent (a half close).
  void FinishSending();

 private:
  int fd_;
  bool connected_ = false;
};

}  // namespace perfgate::testing
