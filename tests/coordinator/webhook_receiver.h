// A webhook receiver for the notification tests: a cpp-httplib server on
// 127.0.0.1 that records every delivery to /hook and the paths below it
// (headers, body, when it came) and
// answers with a chosen status, over HTTP or HTTPS; it can be stopped and started again on the
// same port, as a receiver that goes down for a while.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace perfgate::coordinator {

class WebhookReceiver {
 public:
  struct Delivery {
    std::string idempotency_key, event, signature, body;
    std::string host, path;  // the Host header and the request's path
    int64_t timestamp = 0;
    std::chrono::steady_clock::time_point at;
  };

  /// Plain HTTP, or HTTPS with `cert_file` and `key_file` (PEM).
  explicit WebhookReceiver(int status = 200, std::string answer = "ok", std::string cert_file = "",
                           std::string key_file = "")
      : status_(status), answer_(std::move(answer)), cert_(std::move(cert_file)), key_(std::move(key_file)) {}
  ~WebhookReceiver() { Stop(); }

  /// Listens on `port` (0: any free one, kept for StartAgain); false when it cannot bind.
  bool Start(int port = 0) {
    if (cert_.empty()) {
      server_ = std::make_unique<httplib::Server>();
    } else {
      server_ = std::make_unique<httplib::SSLServer>(cert_.c_str(), key_.c_str());
    }
    server_->Post(R"(/hook(/[^?]*)?)", [this](const httplib::Request& req, httplib::Response& res) {
      Delivery d;
      d.idempotency_key = req.get_header_value("Idempotency-Key");
      d.event = req.get_header_value("X-Perfgate-Event");
      d.signature = req.get_header_value("X-Perfgate-Signature");
      const std::string ts = req.get_header_value("X-Perfgate-Timestamp");
      d.timestamp = ts.empty() ? 0 : std::stoll(ts);
      d.body = req.body;
      d.host = req.get_header_value("Host");
      d.path = req.path;
      d.at = std::chrono::steady_clock::now();
      {
        std::lock_guard<std::mutex> lock(mu_);
        deliveries_.push_back(std::move(d));
      }
      res.status = status_;
      res.set_content(answer_, "text/plain");
    });
    if (port == 0) {
      port_ = server_->bind_to_any_port("127.0.0.1");
      if (port_ <= 0) return false;
    } else if (!server_->bind_to_port("127.0.0.1", port)) {
      return false;
    }
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    // Serving before returning, as the coordinator's HTTP server does: a
    // stop() before the listening loop has begun is lost, and the join in
    // Stop() would then wait forever.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!server_->is_running() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    return server_->is_running();
  }
  bool StartAgain() { return Start(port_); }
  void Stop() {
    if (server_ == nullptr) return;
    server_->stop();
    thread_.join();
    server_.reset();
  }
  int port() const { return port_; }
  /// The URL of its hook on 127.0.0.1; `path` (e.g. "/T000/secret") is added to "/hook".
  std::string url(const std::string& path = "", const std::string& host = "127.0.0.1") const {
    return (cert_.empty() ? "http://" : "https://") + host + ":" + std::to_string(port_) + "/hook" + path;
  }
  std::vector<Delivery> deliveries() const {
    std::lock_guard<std::mutex> lock(mu_);
    return deliveries_;
  }

 private:
  const int status_;
  const std::string answer_;
  const std::string cert_, key_;
  int port_ = 0;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<Delivery> deliveries_;  // guarded by mu_
};

/// Polls `done` every 20 ms until it holds or `timeout` passes; its last answer.
inline bool WaitUntil(const std::function<bool()>& done, std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace perfgate::coordinator
