#include "coordinator/api/auth.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "coordinator/api/error_mapping.h"

namespace perfgate::coordinator {
namespace {

// The host of a peer such as "ipv4:127.0.0.1:5000" or "ipv6:[::1]:5000".
std::string PeerHost(const std::string& peer) {
  const size_t colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

const char* ActionName(Action action) {
  switch (action) {
    case Action::kIngest:
      return "ingest (Ingest.*), which needs role agent or admin";
    case Action::kRead:
      return "read (Query.*, Gate.GetReport), which needs role read, gate or admin";
    case Action::kGate:
      return "evaluate gates (Gate.Evaluate), which needs role gate or admin";
    case Action::kTriage:
      return "triage regressions (POST /api/v1/regressions/ID/triage), which needs role gate or admin";
  }
  return "do this";
}

// Keeps the map of buckets small: drops callers with nothing running whose
// bucket has refilled, once there are many.
constexpr size_t kSweepAbove = 4096;

}  // namespace

bool RoleAllows(Role role, Action action) {
  switch (action) {
    case Action::kIngest:
      return role == Role::kAgent || role == Role::kAdmin;
    case Action::kRead:
      return role == Role::kRead || role == Role::kGate || role == Role::kAdmin;
    case Action::kGate:
    case Action::kTriage:
      return role == Role::kGate || role == Role::kAdmin;
  }
  return false;
}

EvaluationLimiter::Permit::~Permit() {
  if (limiter_ != nullptr) limiter_->Release(key_);
}

absl::StatusOr<EvaluationLimiter::Permit> EvaluationLimiter::Admit(const Caller& caller) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (buckets_.size() > kSweepAbove) {
    for (auto it = buckets_.begin(); it != buckets_.end();) {
      const double minutes = std::chrono::duration<double>(now - it->second.refilled).count() / 60;
      const bool full = it->second.tokens + minutes * per_minute_ >= per_minute_;
      it = it->second.running == 0 && full ? buckets_.erase(it) : std::next(it);
    }
  }
  auto [it, fresh] = buckets_.try_emplace(caller.limit_key);
  Bucket& b = it->second;
  if (fresh) {
    b.tokens = per_minute_;
    b.refilled = now;
  }
  if (b.running >= max_running_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        caller.name, " has ", b.running, " gate evaluations running, the most one caller may ",
        "(--max-evaluations-per-caller); retry when one has ended"));
  }
  if (per_minute_ > 0) {
    const double minutes = std::chrono::duration<double>(now - b.refilled).count() / 60;
    b.tokens = std::min<double>(per_minute_, b.tokens + minutes * per_minute_);
    b.refilled = now;
    if (b.tokens < 1) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%s started its %d gate evaluations of the last minute (--evaluations-per-minute); "
          "the next one is allowed in %.0f s",
          caller.name, per_minute_, std::ceil((1 - b.tokens) * 60 / per_minute_)));
    }
    b.tokens -= 1;
  }
  ++b.running;
  return Permit(this, caller.limit_key);
}

void EvaluationLimiter::Release(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = buckets_.find(key);
  if (it != buckets_.end() && it->second.running > 0) --it->second.running;
}

absl::StatusOr<Caller> Authenticator::Authenticate(const std::optional<std::string>& authorization,
                                                   const std::string& peer, const char* where) const {
  if (!config_.enabled()) return Caller{Role::kAdmin, "anonymous", "peer " + peer};
  if (!authorization.has_value()) {
    return absl::UnauthenticatedError(absl::StrCat("missing 'authorization: Bearer <token>' ", where,
                                                   "; give the client a credential's token (--token-file)"));
  }
  constexpr absl::string_view kBearer = "Bearer ";
  if (!absl::StartsWith(*authorization, kBearer)) {
    return absl::UnauthenticatedError(absl::StrCat("the 'authorization' ", where, " is not 'Bearer <token>'"));
  }
  const std::string token = authorization->substr(kBearer.size());
  if (!config_.shared_token.empty() && ConstantTimeEquals(token, config_.shared_token)) {
    return Caller{Role::kAdmin, "the shared token", "shared token"};
  }
  auto found = FindCredential(store_, token);
  PERFGATE_RETURN_IF_ERROR(found);
  if (!found->has_value()) {
    return absl::UnauthenticatedError(
        "the token does not match any valid credential (unknown, revoked or mistyped)");
  }
  const Credential& c = **found;
  return Caller{c.role, absl::StrCat("credential '", c.name, "' (role ", RoleName(c.role), ")"),
                "credential " + c.key_id, c.role == Role::kAgent ? c.name : ""};
}

absl::StatusOr<Caller> Authenticator::Check(absl::StatusOr<Caller> caller, Action action) const {
  PERFGATE_RETURN_IF_ERROR(caller);
  if (!RoleAllows(caller->role, action)) {
    return absl::PermissionDeniedError(absl::StrCat(caller->name, " may not ", ActionName(action)));
  }
  return caller;
}

absl::StatusOr<Caller> Authenticator::Authorize(const grpc::ServerContext* ctx, Action action) const {
  std::optional<std::string> authorization;
  const auto& md = ctx->client_metadata();
  if (auto it = md.find("authorization"); it != md.end()) {
    authorization.emplace(it->second.data(), it->second.size());
  }
  return Check(Authenticate(authorization, PeerHost(ctx->peer()), "metadata"), action);
}

absl::StatusOr<Caller> Authenticator::AuthorizeHttp(const std::optional<std::string>& authorization,
                                                    const std::string& peer, Action action) const {
  return Check(Authenticate(authorization, peer, "header"), action);
}

absl::Status Authenticator::CheckToken(const std::optional<std::string>& authorization) const {
  return Authenticate(authorization, "", "metadata").status();
}

grpc::Status TokenMetadataProcessor::Process(const InputMetadata& auth_metadata, grpc::AuthContext*,
                                             OutputMetadata*, OutputMetadata*) {
  if (auto path = auth_metadata.find(":path");
      path != auth_metadata.end() && absl::StartsWith(absl::string_view(path->second.data(), path->second.size()),
                                                      "/grpc.health.v1.Health/")) {
    return grpc::Status::OK;
  }
  std::optional<std::string> authorization;
  if (auto it = auth_metadata.find("authorization"); it != auth_metadata.end()) {
    authorization.emplace(it->second.data(), it->second.size());
  }
  return ToGrpc(auth_.CheckToken(authorization), "authorization");
}

grpc::Status Authenticator::CheckRead(const grpc::ServerContext* ctx) const {
  return ToGrpc(Authorize(ctx, Action::kRead).status(), "authorization");
}

grpc::Status Authenticator::CheckAgent(const grpc::ServerContext* ctx, const std::string& agent_name) const {
  auto caller = Authorize(ctx, Action::kIngest);
  if (!caller.ok()) return ToGrpc(caller.status(), "authorization");
  if (caller->role == Role::kAgent && agent_name != caller->agent) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(caller->name, " may ingest only as the agent of its name, not as '",
                                     agent_name, "'"));
  }
  return grpc::Status::OK;
}

grpc::Status Authenticator::CheckRun(const grpc::ServerContext* ctx, const std::string& run_id) const {
  auto caller = Authorize(ctx, Action::kIngest);
  if (!caller.ok()) return ToGrpc(caller.status(), "authorization");
  std::set<std::string> allowed;
  return CheckRunOf(*caller, run_id, &allowed);
}

grpc::Status Authenticator::CheckRunOf(const Caller& caller, const std::string& run_id,
                                       std::set<std::string>* allowed) const {
  if (caller.role != Role::kAgent || allowed->count(run_id) > 0) return grpc::Status::OK;
  auto run = store_.GetRun(run_id);
  if (absl::IsNotFound(run.status()) || absl::IsInvalidArgument(run.status())) return grpc::Status::OK;
  if (!run.ok()) return ToGrpc(run.status(), "authorization");
  if (run->meta.agent_name != caller.agent) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(caller.name, " may not write run ", run_id, " of agent '",
                                     run->meta.agent_name, "'"));
  }
  allowed->insert(run_id);
  return grpc::Status::OK;
}

absl::StatusOr<EvaluationLimiter::Permit> Authenticator::AdmitEvaluation(const grpc::ServerContext* ctx) {
  auto caller = Authorize(ctx, Action::kGate);
  PERFGATE_RETURN_IF_ERROR(caller);
  return limiter_.Admit(*caller);
}

}  // namespace perfgate::coordinator
