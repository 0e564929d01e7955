#include "coordinator/domain/regression_watcher.h"

#include <iostream>

#include "coordinator/domain/metrics.h"
#include "coordinator/domain/regressions.h"

namespace perfgate::coordinator {

RegressionWatcher::RegressionWatcher(Store& store, gate::Policy policy, std::set<std::string> tracked)
    : store_(store), policy_(std::move(policy)), tracked_(std::move(tracked)) {
  if (!tracked_.empty()) thread_ = std::thread([this] { Loop(); });
}

RegressionWatcher::~RegressionWatcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RegressionWatcher::RunClosed(const std::string& run_id, RunStatus status) {
  if (status != RunStatus::kComplete || tracked_.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(run_id);
  }
  cv_.notify_all();
}

uint64_t RegressionWatcher::checked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return checked_;
}

bool RegressionWatcher::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return queue_.empty() && !busy_; });
}

void RegressionWatcher::Check(const std::string& run_id) {
  auto run = store_.GetRun(run_id);
  absl::Status status = run.status();
  if (run.ok() && tracked_.contains(run->meta.branch)) {
    auto found = DetectRegressions(store_, run_id, policy_);
    status = found.status();
    for (const Regression& r : found.ok() ? *found : std::vector<Regression>{}) {
      DefaultMetrics().RegressionDetected();
      std::cout << "perfgate-coordinator: regression " << r.id << ": " << r.benchmark << " "
                << r.metric << " on " << r.sku << "/" << r.branch << " from commit " << r.bad_commit
                << std::endl;
    }
  }
  if (!status.ok()) {
    std::cerr << "perfgate-coordinator: regression check of run " << run_id
              << " failed: " << status.message() << std::endl;
    DefaultMetrics().StoreError("DetectRegressions");
  }
}

void RegressionWatcher::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const std::string run_id = queue_.front();
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    Check(run_id);
    DefaultMetrics().RegressionCheck();
    lock.lock();
    busy_ = false;
    ++checked_;
    cv_.notify_all();
  }
}

}  // namespace perfgate::coordinator
