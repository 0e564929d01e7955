#include "suites/collectives/world.h"

#include <exception>
#include <filesystem>
#include <mutex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gloo/allreduce.h"
#include "gloo/barrier.h"
#include "gloo/broadcast.h"
#include "gloo/math.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/rendezvous/hash_store.h"
#include "gloo/rendezvous/prefix_store.h"
#include "gloo/transport/tcp/device.h"
#include "suites/collectives/tcp_store.h"

namespace perfgate::suites::collectives {
namespace {

// Long enough for every rank of a Slurm job to start; a rank that never comes
// turns into an error, not a hang.
constexpr std::chrono::seconds kRendezvousTimeout(120);
// A collective that takes longer than this is broken, not slow.
constexpr std::chrono::seconds kOperationTimeout(300);

absl::Status FromException(const std::exception& e, const char* what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", e.what()));
}

}  // namespace

absl::StatusOr<RendezvousSpec> ParseRendezvous(const std::string& spec) {
  RendezvousSpec r;
  if (spec.empty()) return r;
  if (spec.rfind("file:", 0) == 0 && spec.size() > 5) {
    r.kind = RendezvousSpec::Kind::kFile;
    r.path = spec.substr(5);
    return r;
  }
  if (spec.rfind("tcp:", 0) == 0) {
    const std::string rest = spec.substr(4);
    const size_t colon = rest.rfind(':');
    int port = 0;
    if (colon != std::string::npos && colon > 0 && absl::SimpleAtoi(rest.substr(colon + 1), &port) &&
        port > 0 && port < 65536) {
      r.kind = RendezvousSpec::Kind::kTcp;
      r.host = rest.substr(0, colon);
      r.port = port;
      return r;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--rendezvous '", spec, "': expected file:DIR (a directory every rank sees) or tcp:HOST:PORT "
      "(rank 0 listens there)"));
}

absl::Status ValidateWorldOptions(const WorldOptions& o) {
  if (o.size < 1) return absl::InvalidArgumentError("--world-size must be at least 1");
  if (o.rank < 0 || o.rank >= o.size) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rank ", o.rank, " is outside [0, ", o.size, ") of --world-size ", o.size));
  }
  auto r = ParseRendezvous(o.rendezvous);
  PERFGATE_RETURN_IF_ERROR(r);
  if (o.size > 1 && r->kind == RendezvousSpec::Kind::kNone) {
    return absl::InvalidArgumentError(
        "--world-size > 1 needs --rendezvous file:DIR or tcp:HOST:PORT so the ranks can find each other");
  }
  return absl::OkStatus();
}

World::World(WorldOptions options) : options_(std::move(options)) {}

World::~World() = default;

absl::StatusOr<gloo::rendezvous::Store*> World::Store() {
  if (store_) return store_.get();
  PERFGATE_RETURN_IF_ERROR(ValidateWorldOptions(options_));
  auto spec = ParseRendezvous(options_.rendezvous);
  try {
    switch (spec->kind) {
      case RendezvousSpec::Kind::kNone:
        base_store_ = std::make_unique<gloo::rendezvous::HashStore>();
        break;
      case RendezvousSpec::Kind::kFile: {
        // Every rank may be first: each makes the directory if it is missing.
        std::error_code ec;
        std::filesystem::create_directories(spec->path, ec);
        if (ec) {
          return absl::UnavailableError(absl::StrCat("rendezvous: cannot create ", spec->path, ": ",
                                                     ec.message()));
        }
        base_store_ = std::make_unique<gloo::rendezvous::FileStore>(spec->path);
        break;
      }
      case RendezvousSpec::Kind::kTcp:
        if (options_.rank == 0) {
          auto server = TcpStoreServer::Start(spec->host, spec->port);
          PERFGATE_RETURN_IF_ERROR(server);
          server_ = std::shared_ptr<TcpStoreServer>(std::move(*server));
        }
        base_store_ = std::make_unique<TcpStore>(spec->host, spec->port, kRendezvousTimeout);
        break;
    }
  } catch (const std::exception& e) {
    return FromException(e, "rendezvous");
  }
  store_ = std::make_unique<gloo::rendezvous::PrefixStore>("perfgate", *base_store_);
  return store_.get();
}

absl::StatusOr<std::shared_ptr<gloo::Context>> World::Context() {
  if (context_) return context_;
  auto store = Store();
  PERFGATE_RETURN_IF_ERROR(store);
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = options_.transport_host;
    if (attr.hostname.empty() && options_.size == 1) attr.hostname = "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(options_.rank, options_.size);
    context->setTimeout(kRendezvousTimeout);
    context->connectFullMesh(**store, device);
    context->setTimeout(kOperationTimeout);
    context_ = context;
  } catch (const std::exception& e) {
    return FromException(e, absl::StrCat("rank ", options_.rank, " of ", options_.size,
                                         ": connecting the ranks failed").c_str());
  }
  return context_;
}

absl::Status World::Barrier() {
  if (options_.size == 1) return absl::OkStatus();
  auto ctx = Context();
  PERFGATE_RETURN_IF_ERROR(ctx);
  try {
    gloo::BarrierOptions opts(*ctx);
    gloo::barrier(opts);
  } catch (const std::exception& e) {
    return FromException(e, "barrier");
  }
  return absl::OkStatus();
}

absl::Status World::AllReduceMax(std::vector<double>& values) {
  if (options_.size == 1 || values.empty()) return absl::OkStatus();
  auto ctx = Context();
  PERFGATE_RETURN_IF_ERROR(ctx);
  try {
    gloo::AllreduceOptions opts(*ctx);
    opts.setOutput(values.data(), values.size());
    void (*fn)(void*, const void*, const void*, size_t) = &gloo::max<double>;
    opts.setReduceFunction(fn);
    gloo::allreduce(opts);
  } catch (const std::exception& e) {
    return FromException(e, "agreeing on the sample time");
  }
  return absl::OkStatus();
}

absl::Status World::Broadcast(int64_t& value) {
  if (options_.size == 1) return absl::OkStatus();
  auto ctx = Context();
  PERFGATE_RETURN_IF_ERROR(ctx);
  try {
    gloo::BroadcastOptions opts(*ctx);
    opts.setOutput(&value, 1);
    opts.setRoot(0);
    gloo::broadcast(opts);
  } catch (const std::exception& e) {
    return FromException(e, "broadcasting rank 0's decision");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<char>> World::ShareFromRoot(const std::string& key,
                                                       std::vector<char> data) {
  auto store = Store();
  PERFGATE_RETURN_IF_ERROR(store);
  try {
    if (options_.rank == 0) {
      (*store)->set(key, data);
      return data;
    }
    (*store)->wait({key}, kRendezvousTimeout);
    return (*store)->get(key);
  } catch (const std::exception& e) {
    return FromException(e, absl::StrCat("rendezvous key ", key).c_str());
  }
}

namespace {

std::mutex& ProcessWorldMutex() {
  static std::mutex mu;
  return mu;
}

std::unique_ptr<World>& ProcessWorldSlot() {
  static std::unique_ptr<World> world = std::make_unique<World>(WorldOptions{});
  return world;
}

}  // namespace

World& ProcessWorld() {
  std::lock_guard<std::mutex> lock(ProcessWorldMutex());
  return *ProcessWorldSlot();
}

void SetProcessWorld(const WorldOptions& options) {
  std::lock_guard<std::mutex> lock(ProcessWorldMutex());
  ProcessWorldSlot() = std::make_unique<World>(options);
}

}  // namespace perfgate::suites::collectives
