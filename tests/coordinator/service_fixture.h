// The fixture of the service tests: a migrated store (migrated_store_test.h)
// behind the coordinator's gRPC server on a loopback port with a shared
// token, and stubs of Ingest and Query talking to it.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/identity.h"
#include "coordinator/api/server.h"
#include "perfgate/v1/ingest.grpc.pb.h"
#include "perfgate/v1/query.grpc.pb.h"
#include "tests/coordinator/migrated_store_test.h"
#include "wire/convert.h"

namespace perfgate::coordinator {

class ServiceTest : public MigratedStoreTest {
 protected:
  void SetUp() override {
    MigratedStoreTest::SetUp();
    if (HasFatalFailure()) return;
    ServerConfig config;
    config.listen = "127.0.0.1:0";
    config.auth.shared_token = "s3cret";
    auto server = Server::Start(config, *store_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                       grpc::InsecureChannelCredentials());
    ingest_ = v1::Ingest::NewStub(channel);
    query_ = v1::Query::NewStub(channel);
  }

  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  std::unique_ptr<grpc::ClientContext> Context(const std::string& token = "s3cret") {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    return ctx;
  }

  // Registers an agent and opens a run; returns its id.
  std::string OpenRun() {
    v1::RegisterAgentRequest reg;
    reg.set_name("node-1");
    v1::RegisterAgentResponse reg_resp;
    EXPECT_TRUE(ingest_->RegisterAgent(Context().get(), reg, &reg_resp).ok());
    RunMeta meta;
    meta.run_id = NewUuid();
    meta.agent_name = "node-1";
    meta.environment = {"cpu-amd-epyc", {{"cpu_model", "AMD EPYC"}}};
    meta.branch = "main";
    meta.commit = "abc";
    meta.started_at = std::chrono::system_clock::now();
    v1::OpenRunRequest req;
    wire::ToProto(meta, &req);
    v1::OpenRunResponse resp;
    grpc::Status s = ingest_->OpenRun(Context().get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return meta.run_id;
  }

  static v1::ResultBatch Batch(const std::string& run_id, uint64_t seq, std::vector<double> times) {
    CaseResult c;
    c.benchmark = {"kernels", "copy", {{"bytes", "1024"}}};
    c.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
    for (size_t i = 0; i < times.size(); ++i) c.samples.push_back({static_cast<uint32_t>(i), {times[i]}, false});
    c.status = CaseStatus::kOk;
    v1::ResultBatch b;
    b.set_run_id(run_id);
    b.set_sequence(seq);
    wire::ToProto(c, b.add_cases());
    return b;
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<v1::Ingest::Stub> ingest_;
  std::unique_ptr<v1::Query::Stub> query_;
};

}  // namespace perfgate::coordinator
