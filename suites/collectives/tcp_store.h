// A key-value store over TCP for the rendezvous when the ranks share no
// file system. Debian's Gloo offers FileStore, HashStore (in-process) and
// RedisStore (a Redis server) but no TCP store, and NCCL's bootstrap needs its
// unique id delivered by the caller, so the suite carries this small one:
// rank 0 serves, every rank (rank 0 included) is a client.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "gloo/rendezvous/store.h"

namespace perfgate::suites::collectives {

/// The server: a map from key to bytes; a get waits until its key is set.
class TcpStoreServer {
 public:
  /// Listens on host:port (port 0: any free port; see port()).
  static absl::StatusOr<std::unique_ptr<TcpStoreServer>> Start(const std::string& host, int port);
  /// Stops serving and joins every connection.
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  /// The port it listens on.
  int port() const { return port_; }

 private:
  TcpStoreServer(int fd, int port) : listen_fd_(fd), port_(port) {}
  void Accept();
  void Serve(int fd);

  int listen_fd_;
  int port_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, std::vector<char>> data_;
  std::vector<int> clients_;
  std::vector<std::thread> threads_;
  bool stopping_ = false;
  std::thread acceptor_;
};

/// A client of TcpStoreServer, usable wherever Gloo takes a Store. Calls
/// throw std::runtime_error when the server cannot be reached or a key does
/// not appear within the timeout (Gloo's Store reports errors by throwing).
class TcpStore : public gloo::rendezvous::Store {
 public:
  /// Connects to host:port, retrying until `timeout` (the server may start later).
  TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout);
  ~TcpStore() override;

  /// Stores `data` under `key` once the server has acknowledged it.
  void set(const std::string& key, const std::vector<char>& data) override;
  /// The value of `key`, waiting up to the store's timeout for it to be set.
  std::vector<char> get(const std::string& key) override;
  /// Waits up to the store's timeout until every key is set.
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  /// Waits up to `timeout` for each key in turn.
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  std::vector<char> Get(const std::string& key, std::chrono::milliseconds timeout);

  int fd_ = -1;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
};

}  // namespace perfgate::suites::collectives
