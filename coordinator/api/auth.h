// Who may call what: the one check every handler of Ingest, Gate and Query
// makes first (grpc.health.v1 alone is open), the same check of every HTTP
// route but /healthz and the dashboard's files (http_server.h), and the
// per-caller bound on gate evaluations. docs/security.md describes the model.
//
// A caller presents "authorization: Bearer <token>" (gRPC metadata or the
// HTTP Authorization header). When authentication is
// on (a shared token or required credentials), the token is either the
// shared one (--token-file: role admin) or a credential issued by
// `perfgate-coordinator credentials issue` (credentials.h), whose role says
// what it may do. When it is off, every caller is an anonymous admin.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "coordinator/domain/credentials.h"
#include "coordinator/store.h"

namespace perfgate::coordinator {

/// What a call does, as far as permissions go.
enum class Action {
  kIngest,  // Ingest.*: register an agent, store runs and calibrations
  kRead,    // Query.*, Gate.GetReport
  kGate,    // Gate.Evaluate
  kTriage,  // HTTP POST /api/v1/regressions/ID/triage
};

struct AuthConfig {
  std::string shared_token;          // --token-file's token, role admin; empty: none
  bool require_credentials = false;  // --require-credentials
  int max_evaluations = 2;           // Gate.Evaluate calls one caller may have running at once
  int evaluations_per_minute = 30;   // Gate.Evaluate calls one caller may start per minute; 0: no bound

  /// Authentication is on with a shared token or required credentials.
  bool enabled() const { return !shared_token.empty() || require_credentials; }
};

/// The caller of one call, once authenticated.
struct Caller {
  Role role = Role::kAdmin;
  std::string name;       // the credential's name, "shared token", or "anonymous"
  std::string limit_key;  // whose limits the call counts against
  std::string agent;      // Role::kAgent: the one agent it may ingest as
};

/// True when `role` may do `action` (the agent binding aside).
bool RoleAllows(Role role, Action action);

/// Bounds Gate.Evaluate per caller: a number running at once and a number
/// started per minute (a token bucket refilled continuously).
class EvaluationLimiter {
 public:
  EvaluationLimiter(int max_running, int per_minute) : max_running_(max_running), per_minute_(per_minute) {}

  /// Holds one running evaluation of a caller until destroyed.
  class Permit {
   public:
    Permit(EvaluationLimiter* limiter, std::string key) : limiter_(limiter), key_(std::move(key)) {}
    Permit(Permit&& o) noexcept : limiter_(o.limiter_), key_(std::move(o.key_)) { o.limiter_ = nullptr; }
    Permit& operator=(Permit&&) = delete;
    ~Permit();

   private:
    EvaluationLimiter* limiter_;
    std::string key_;
  };

  /// A permit, or RESOURCE_EXHAUSTED naming the bound the caller reached.
  absl::StatusOr<Permit> Admit(const Caller& caller);

 private:
  struct Bucket {
    int running = 0;
    double tokens = 0;
    std::chrono::steady_clock::time_point refilled;
  };
  void Release(const std::string& key);

  const int max_running_;
  const int per_minute_;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;  // guarded by mu_
};

class Authenticator {
 public:
  Authenticator(AuthConfig config, Store& store)
      : config_(std::move(config)), store_(store),
        limiter_(config_.max_evaluations, config_.evaluations_per_minute) {}

  /// The caller of ctx when it may do `action`: UNAUTHENTICATED for a missing,
  /// malformed, unknown or revoked token, PERMISSION_DENIED for a role that
  /// does not allow the action.
  absl::StatusOr<Caller> Authorize(const grpc::ServerContext* ctx, Action action) const;
  /// The same for an HTTP request: `authorization` is the value of its
  /// Authorization header (nullopt when it has none), `peer` its address.
  absl::StatusOr<Caller> AuthorizeHttp(const std::optional<std::string>& authorization, const std::string& peer,
                                       Action action) const;
  /// True when callers must authenticate (AuthConfig::enabled).
  bool enabled() const { return config_.enabled(); }
  /// UNAUTHENTICATED unless `authorization` (gRPC metadata; nullopt when
  /// absent) names the shared token or a valid credential: the role-free
  /// part of Authorize, which TokenMetadataProcessor runs before a
  /// call's message is read.
  absl::Status CheckToken(const std::optional<std::string>& authorization) const;

  /// Authorize for a read.
  grpc::Status CheckRead(const grpc::ServerContext* ctx) const;
  /// Authorize for Ingest as agent `agent_name`: an agent credential may
  /// only name its own agent (PERMISSION_DENIED otherwise).
  grpc::Status CheckAgent(const grpc::ServerContext* ctx, const std::string& agent_name) const;
  /// Authorize for Ingest into run `run_id`: an agent credential only into
  /// its own agent's runs. A run that does not exist passes (the store then
  /// says NOT_FOUND).
  grpc::Status CheckRun(const grpc::ServerContext* ctx, const std::string& run_id) const;
  /// The same for a caller already authorized, remembering the runs it may
  /// write in `allowed` (a stream checks each run once).
  grpc::Status CheckRunOf(const Caller& caller, const std::string& run_id, std::set<std::string>* allowed) const;
  /// Authorize for Gate.Evaluate and admit it under the caller's bounds.
  absl::StatusOr<EvaluationLimiter::Permit> AdmitEvaluation(const grpc::ServerContext* ctx);

 private:
  // The caller presenting `authorization` (nullopt: nothing presented);
  // `where` names what carries it in messages ("metadata", "header").
  absl::StatusOr<Caller> Authenticate(const std::optional<std::string>& authorization, const std::string& peer,
                                      const char* where) const;
  absl::StatusOr<Caller> Check(absl::StatusOr<Caller> caller, Action action) const;

  const AuthConfig config_;
  Store& store_;
  EvaluationLimiter limiter_;
};

/// Refuses a gRPC call without a valid token from its metadata alone, so
/// that gRPC never reads its message. grpc++ runs it only on TLS ports;
/// grpc.health.v1 stays open. The handlers still check the role.
class TokenMetadataProcessor : public grpc::AuthMetadataProcessor {
 public:
  explicit TokenMetadataProcessor(const Authenticator& auth) : auth_(auth) {}
  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata, OutputMetadata* response_metadata) override;

 private:
  const Authenticator& auth_;
};

}  // namespace perfgate::coordinator
