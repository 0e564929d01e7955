// The ranks a collective case runs over and the host-side channel they share:
// the rendezvous store, the Gloo context (the data path of the Gloo backend
// and the control path of every backend: barriers, the agreed sample time,
// rank 0's stop decision), and the NCCL unique id exchange.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gloo {
class Context;
namespace rendezvous {
class Store;
}  // namespace rendezvous
}  // namespace gloo

namespace perfgate::suites::collectives {

/// Where and how this process takes part in the collectives.
struct WorldOptions {
  int rank = 0;
  int size = 1;
  // "file:DIR" (a directory every rank sees, empty at the start of the run)
  // or "tcp:HOST:PORT" (rank 0 serves the store there). Needed when size > 1.
  std::string rendezvous;
  // Address this rank's Gloo transport binds to and advertises; empty: the
  // address the machine's hostname resolves to.
  std::string transport_host;
  // NCCL: the CUDA device of this rank (-1: the Slurm local id, else the
  // rank, modulo the visible devices). With size 1: how many devices one process
  // drives (0: all visible ones).
  int device = -1;
  int gpus = 0;
  // Testing only: after the verified run, rank `corrupt_rank` changes one
  // element of its result, so the check has something to find (-1: never).
  int corrupt_rank = -1;
};

/// The parsed --rendezvous value.
struct RendezvousSpec {
  enum class Kind { kNone, kFile, kTcp } kind = Kind::kNone;
  std::string path;  // kFile
  std::string host;  // kTcp
  int port = 0;      // kTcp
};

/// Parses "file:DIR" or "tcp:HOST:PORT" ("" is kNone); INVALID_ARGUMENT otherwise.
absl::StatusOr<RendezvousSpec> ParseRendezvous(const std::string& spec);

/// Checks the options once at start: rank in [0, size), a rendezvous when
/// size > 1. INVALID_ARGUMENT with the reason otherwise.
absl::Status ValidateWorldOptions(const WorldOptions& options);

/// One process's (or, in tests, one thread's) membership of the world. The
/// store and the Gloo context are made on first use and kept, so every case
/// of a run shares one rendezvous.
class World {
 public:
  /// Records the options; nothing connects until a collective needs it.
  explicit World(WorldOptions options);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  /// The options the world was made with.
  const WorldOptions& options() const { return options_; }
  /// This member's rank, in [0, size()).
  int rank() const { return options_.rank; }
  /// Ranks in the world.
  int size() const { return options_.size; }

  /// The Gloo context over every rank, connected on first call.
  absl::StatusOr<std::shared_ptr<gloo::Context>> Context();
  /// Waits until every rank has called it.
  absl::Status Barrier();
  /// Element-wise maximum of `values` over the ranks, in place.
  absl::Status AllReduceMax(std::vector<double>& values);
  /// Rank 0's `value` on every rank.
  absl::Status Broadcast(int64_t& value);
  /// Publishes `data` under `key` (rank 0) or waits for and reads it (others):
  /// how the NCCL unique id reaches every rank.
  absl::StatusOr<std::vector<char>> ShareFromRoot(const std::string& key, std::vector<char> data);

  /// The NCCL communicators of this world, made by the NCCL backend on first
  /// use and kept for every later case (null until then).
  std::shared_ptr<void> nccl;

 private:
  absl::StatusOr<gloo::rendezvous::Store*> Store();

  WorldOptions options_;
  std::unique_ptr<gloo::rendezvous::Store> base_store_;
  std::unique_ptr<gloo::rendezvous::Store> store_;
  std::shared_ptr<gloo::Context> context_;
  std::shared_ptr<void> server_;  // the TCP store server on rank 0
};

/// The world the registered case bodies run in; rank 0 of 1 until
/// SetProcessWorld() is called.
World& ProcessWorld();
/// Replaces the process's world (the agent calls it once, before any case).
void SetProcessWorld(const WorldOptions& options);

}  // namespace perfgate::suites::collectives
