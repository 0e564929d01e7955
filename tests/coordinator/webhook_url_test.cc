// Webhook URLs read with RFC 3986's grammar, and the addresses a delivery
// may reach, without a database or a network: what is refused is named by
// its part and position, a password is never echoed, loopback, private,
// link-local and metadata addresses are told apart from public ones
// (also when IPv6 carries them), and `localhost` is resolved and refused.
#include <gtest/gtest.h>

#include "coordinator/domain/webhook_url.h"

namespace perfgate::coordinator {
namespace {

TEST(WebhookUrl, ReadsSchemeHostPortAndTargetAsTheRequestNeedsThem) {
  auto u = ParseWebhookUrl("HTTPS://Hooks.Example.COM:8443/a/b;c?x=1&y=%20z#part");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->scheme, "https");
  EXPECT_EQ(u->host, "hooks.example.com");
  EXPECT_FALSE(u->ip_literal);
  EXPECT_EQ(u->port, 8443);
  EXPECT_EQ(u->target, "/a/b;c?x=1&y=%20z") << "the fragment is never sent";
  EXPECT_EQ(HostHeader(*u), "hooks.example.com:8443");

  u = ParseWebhookUrl("http://hooks.example.com");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->target, "/");
  EXPECT_EQ(HostHeader(*u), "hooks.example.com");

  u = ParseWebhookUrl("http://[2001:DB8::1]:8080?q");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->host, "2001:db8::1");
  EXPECT_TRUE(u->ip_literal);
  EXPECT_EQ(u->target, "/?q");
  EXPECT_EQ(HostHeader(*u), "[2001:db8::1]:8080");

  u = ParseWebhookUrl("https://192.0.2.10/hook");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_TRUE(u->ip_literal);
  EXPECT_EQ(u->port, 443);
}

TEST(WebhookUrl, RefusesWhatTheGrammarDoesNotAllowNamingThePart) {
  const struct {
    std::string url, expected;
  } cases[] = {
      {"https://hooks.example.com/a b", "a space at character 28"},
      {"https://hooks.example.com/a\nb", "a control character (0x0a) at character 28"},
      {"https://hooks.example.com/\xc3\xa9", "a non-ASCII byte (0xc3) at character 27"},
      {"", "empty"},
      {"ftp://hooks.example.com/", "the scheme 'ftp' is not http or https"},
      {"hooks.example.com/x", "no scheme"},
      {"https:hooks.example.com", "after 'https:' comes '//'"},
      {"https:///path", "the host is empty"},
      {"https://:443/path", "the host is empty"},
      {"https://hooks.example.com:0/", "the port '0'"},
      {"https://hooks.example.com:99999/", "the port '99999'"},
      {"https://hooks.example.com:8a/", "the port '8a'"},
      {"https://hooks.example.com:/", "the port after ':' is empty"},
      {"https://hooks..example.com/", "empty label"},
      {"https://hooks.example.com./", "empty label"},
      {"https://hooks!.example.com/", "holds '!'"},
      {"https://hooks%2eexample.com/", "percent-encoded"},
      {"https://[::1/", "no closing ']'"},
      {"https://[::1]x/", "after the IPv6 host's ']'"},
      {"https://[fe80::1%25eth0]/", "IPv6 zone"},
      {"https://[v1.x]/", "IPvFuture"},
      {"https://[2001:db8::g]/", "is not an IPv6 address"},
      {"http://2130706433/", "not an IPv4 address in dotted-quad form"},
      {"http://127.1/", "dotted-quad"},
      {"http://0x7f.0.0.1/", "dotted-quad"},
      {"http://0177.0.0.1/", "dotted-quad"},
      {"http://1.2.3.256/", "dotted-quad"},
      {"https://hooks.example.com/a%zz", "the path has a '%' at character 28"},
      {"https://hooks.example.com/a%4", "the path has a '%'"},
      {"https://hooks.example.com/a<b", "the path holds '<' at character 28"},
      {"https://hooks.example.com/a?b=|", "the query holds '|'"},
      {"https://hooks.example.com/a#b\\", "the fragment holds '\\'"},
      {"https://hooks.example.com/" + std::string(2100, 'a'), "longer than 2048"},
  };
  for (const auto& c : cases) {
    const auto u = ParseWebhookUrl(c.url);
    ASSERT_FALSE(u.ok()) << c.url;
    EXPECT_TRUE(absl::IsInvalidArgument(u.status())) << c.url;
    EXPECT_NE(u.status().message().find(c.expected), std::string::npos)
        << c.url << ": " << u.status().message();
  }
}

TEST(WebhookUrl, RefusesUserInformationWithoutEchoingThePassword) {
  for (const char* url : {"https://alice:hunter2-secret@hooks.example.com/x", "https://hunter2-secret@hooks.example.com",
                          "http://alice:hunter2-secret@127.0.0.1:9/"}) {
    const auto u = ParseWebhookUrl(url);
    ASSERT_FALSE(u.ok()) << url;
    EXPECT_NE(u.status().message().find("user information"), std::string::npos) << u.status().message();
    EXPECT_EQ(u.status().message().find("hunter2"), std::string::npos) << u.status().message();
    const absl::Status add = CheckWebhookUrl(url, /*allow_private=*/true);
    EXPECT_EQ(add.message().find("hunter2"), std::string::npos) << add.message();
  }
  EXPECT_EQ(WithoutUserinfo("https://alice:hunter2@hooks.example.com/p?q=a@b"), "https://hooks.example.com/p?q=a@b");
  EXPECT_EQ(WithoutUserinfo("https://hooks.example.com/p@q"), "https://hooks.example.com/p@q");
}

TEST(WebhookAddress, TellsLoopbackPrivateLinkLocalAndMetadataFromPublic) {
  const struct {
    std::string address;
    AddressKind kind;
    std::string why;
  } cases[] = {
      {"127.0.0.1", AddressKind::kPrivate, "loopback"},
      {"127.255.0.9", AddressKind::kPrivate, "loopback"},
      {"10.1.2.3", AddressKind::kPrivate, "RFC 1918"},
      {"172.16.0.1", AddressKind::kPrivate, "RFC 1918"},
      {"172.31.255.255", AddressKind::kPrivate, "RFC 1918"},
      {"172.32.0.1", AddressKind::kPublic, ""},
      {"192.168.7.7", AddressKind::kPrivate, "RFC 1918"},
      {"100.64.0.1", AddressKind::kPrivate, "CGNAT"},
      {"100.127.255.255", AddressKind::kPrivate, "CGNAT"},
      {"100.128.0.1", AddressKind::kPublic, ""},
      {"169.254.1.1", AddressKind::kPrivate, "link-local"},
      {"169.254.169.254", AddressKind::kMetadata, "metadata"},
      {"169.254.170.2", AddressKind::kMetadata, "metadata"},
      {"0.0.0.0", AddressKind::kPrivate, "unspecified"},
      {"224.0.0.1", AddressKind::kPrivate, "multicast"},
      {"255.255.255.255", AddressKind::kPrivate, "broadcast"},
      {"8.8.8.8", AddressKind::kPublic, ""},
      {"::1", AddressKind::kPrivate, "loopback"},
      {"::", AddressKind::kPrivate, "unspecified"},
      {"fc00::1", AddressKind::kPrivate, "ULA"},
      {"fdff:1::1", AddressKind::kPrivate, "ULA"},
      {"fe80::1", AddressKind::kPrivate, "link-local"},
      {"febf::1", AddressKind::kPrivate, "link-local"},
      {"fd00:ec2::254", AddressKind::kMetadata, "metadata"},
      {"ff02::1", AddressKind::kPrivate, "multicast"},
      {"::ffff:127.0.0.1", AddressKind::kPrivate, "loopback"},
      {"::ffff:169.254.169.254", AddressKind::kMetadata, "metadata"},
      {"64:ff9b::a9fe:a9fe", AddressKind::kMetadata, "metadata"},  // NAT64 of 169.254.169.254
      {"2002:0a00:0001::1", AddressKind::kPrivate, "RFC 1918"},     // 6to4 of 10.0.0.1
      {"::ffff:8.8.8.8", AddressKind::kPublic, ""},
      {"2606:4700::1111", AddressKind::kPublic, ""},
  };
  for (const auto& c : cases) {
    auto a = ParseIpAddress(c.address);
    ASSERT_TRUE(a.ok()) << c.address;
    std::string why;
    EXPECT_EQ(ClassifyAddress(*a, &why), c.kind) << c.address;
    EXPECT_NE(why.find(c.why), std::string::npos) << c.address << ": " << why;
  }
  EXPECT_FALSE(ParseIpAddress("127.1").ok());
}

TEST(WebhookAddress, AddRefusesLiteralPrivateAndMetadataHostsUnlessAllowedAndMetadataAlways) {
  const struct {
    std::string url, expected;  // expected: "" when allowed with --allow-private
  } cases[] = {
      {"http://127.0.0.1:8080/hook", ""},
      {"http://[::1]:9/", ""},
      {"http://localhost:9/", ""},
      {"http://api.localhost/", ""},
      {"http://10.0.0.5/", ""},
      {"http://100.64.1.1/", ""},
      {"http://[fd12:3456::1]/", ""},
      {"http://[fe80::1]/", ""},
      {"http://0.0.0.0:9/", ""},
      {"http://169.254.169.254/latest/meta-data/", "metadata"},
      {"http://[fd00:ec2::254]/", "metadata"},
      {"http://[::ffff:169.254.169.254]/", "metadata"},
  };
  for (const auto& c : cases) {
    const absl::Status refused = CheckWebhookUrl(c.url, /*allow_private=*/false);
    EXPECT_TRUE(absl::IsInvalidArgument(refused)) << c.url;
    EXPECT_NE(refused.message().find(c.expected.empty() ? "--allow-private" : c.expected), std::string::npos)
        << c.url << ": " << refused.message();
    const absl::Status allowed = CheckWebhookUrl(c.url, /*allow_private=*/true);
    EXPECT_EQ(allowed.ok(), c.expected.empty()) << c.url << ": " << allowed;
  }
  EXPECT_TRUE(CheckWebhookUrl("https://hooks.example.com/x", false).ok());
  EXPECT_TRUE(CheckWebhookUrl("https://8.8.8.8/x", false).ok());
}

// At delivery a name is resolved once and every address it gives is
// judged; `localhost` resolves offline, to 127.0.0.1 and perhaps ::1.
TEST(WebhookAddress, ANameResolvingToLoopbackIsRefusedAtDeliveryUnlessAllowed) {
  auto url = ParseWebhookUrl("http://localhost:9/hook");
  ASSERT_TRUE(url.ok()) << url.status();
  const auto refused = CheckedAddresses(*url, /*allow_private=*/false);
  ASSERT_TRUE(absl::IsPermissionDenied(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find("loopback"), std::string::npos) << refused.status();
  EXPECT_EQ(refused.status().message().find("localhost:9"), std::string::npos) << refused.status();
  const auto allowed = CheckedAddresses(*url, /*allow_private=*/true);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  ASSERT_FALSE(allowed->empty());
  for (const IpAddress& a : *allowed) {
    std::string why;
    EXPECT_EQ(ClassifyAddress(a, &why), AddressKind::kPrivate) << ToString(a);
    EXPECT_NE(why.find("loopback"), std::string::npos) << ToString(a);
  }
  url = ParseWebhookUrl("http://169.254.169.254/latest/meta-data/");
  ASSERT_TRUE(url.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(CheckedAddresses(*url, /*allow_private=*/true).status()));
}

}  // namespace
}  // namespace perfgate::coordinator
