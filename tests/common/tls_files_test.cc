// TLS files read and checked before any connection: each wrong file named;
// and put on an OpenSSL context (tls_context.h).
#include "common/tls_files.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include "common/tls_context.h"

#include <fstream>

#include "tests/support/processes.h"
#include "tests/support/tls.h"

namespace perfgate::tls_files_test {
namespace {

class TlsFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = testing::TempDir::Create("perfgate-tls-files-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = std::make_unique<testing::TempDir>(std::move(*dir));
    auto pki = testing::MakeTestPki(dir_->path());
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *pki;
  }

  std::string Message(const TlsFiles& files) {
    auto pem = LoadTlsFiles(files);
    EXPECT_FALSE(pem.ok());
    return pem.ok() ? "" : std::string(pem.status().message());
  }

  std::unique_ptr<testing::TempDir> dir_;
  testing::TestPki pki_;
};

TEST_F(TlsFilesTest, AMatchingSetIsRead) {
  auto pem = LoadTlsFiles({pki_.server_cert, pki_.server_key, pki_.ca_cert});
  ASSERT_TRUE(pem.ok()) << pem.status();
  EXPECT_NE(pem->cert.find("BEGIN CERTIFICATE"), std::string::npos);
  EXPECT_NE(pem->key.find("PRIVATE KEY"), std::string::npos);
  EXPECT_NE(pem->ca.find("BEGIN CERTIFICATE"), std::string::npos);
  auto none = LoadTlsFiles({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->cert.empty() && none->key.empty() && none->ca.empty());
}

TEST_F(TlsFilesTest, EachWrongFileIsNamed) {
  const std::string garbage = dir_->Join("garbage.pem");
  std::ofstream(garbage) << "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  const std::string missing = dir_->Join("missing.pem");
  EXPECT_EQ(Message({missing, pki_.server_key, ""}), "--tls-cert " + missing + ": cannot open: No such file or directory");
  EXPECT_EQ(Message({garbage, pki_.server_key, ""}),
            "--tls-cert " + garbage + ": no PEM certificate in it (expected -----BEGIN CERTIFICATE-----)");
  EXPECT_NE(Message({pki_.server_cert, pki_.server_cert, ""}).find("--tls-key " + pki_.server_cert + ": no unencrypted PEM private key"),
            std::string::npos);
  EXPECT_EQ(Message({pki_.server_cert, pki_.client_key, ""}),
            "--tls-key " + pki_.client_key + " is not the key of the certificate in --tls-cert " + pki_.server_cert);
  EXPECT_EQ(Message({"", "", garbage}).rfind("--tls-ca " + garbage + ": no PEM certificate", 0), 0u);
  EXPECT_EQ(Message({pki_.server_cert, "", ""}), "--tls-cert and --tls-key are given together");
  auto renamed = LoadTlsFiles({"", "", missing}, {"--a", "--b", "--tls-client-ca"});
  ASSERT_FALSE(renamed.ok());
  EXPECT_EQ(renamed.status().message().rfind("--tls-client-ca " + missing, 0), 0u) << renamed.status();
}

TEST_F(TlsFilesTest, ContextTakesAMatchingChainAndRefusesAForeignKey) {
  auto server = LoadTlsFiles({pki_.server_cert, pki_.server_key, pki_.ca_cert});
  auto client = LoadTlsFiles({pki_.client_cert, pki_.client_key, ""});
  ASSERT_TRUE(server.ok() && client.ok());
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_method()), &SSL_CTX_free);
  ASSERT_NE(ctx, nullptr);
  EXPECT_TRUE(UseCertificateChain(ctx.get(), server->cert, server->key).ok());
  EXPECT_TRUE(TrustOnly(ctx.get(), server->ca).ok());
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> other(SSL_CTX_new(TLS_method()), &SSL_CTX_free);
  absl::Status foreign = UseCertificateChain(other.get(), server->cert, client->key);
  EXPECT_EQ(foreign.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(foreign.message().find("the private key: "), std::string::npos) << foreign;
  EXPECT_GT(foreign.message().size(), std::string("the private key: ").size()) << "OpenSSL's reason is named";
  EXPECT_EQ(TrustOnly(other.get(), "not PEM").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LastTlsError(), "") << "the error queue is left empty";
}

}  // namespace
}  // namespace perfgate::tls_files_test
