#include "common/identity.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace perfgate {

std::string BenchmarkId::Key() const {
  std::string key = absl::StrCat(suite, "/", name);
  if (!params.empty()) {
    key += '{';
    bool first = true;
    for (const auto& [k, v] : params) {  // std::map keeps them sorted
      if (!first) key += ',';
      first = false;
      absl::StrAppend(&key, k, "=", v);
    }
    key += '}';
  }
  return key;
}

std::string Environment::Hash() const {
  std::string canonical = absl::StrCat("sku=", sku, "\n");
  for (const auto& [k, v] : fields) absl::StrAppend(&canonical, k, "=", v, "\n");
  return Sha256Hex(canonical);
}

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  std::string hex;
  hex.reserve(2 * SHA256_DIGEST_LENGTH);
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned char b : digest) {
    hex += kHex[b >> 4];
    hex += kHex[b & 0xf];
  }
  return hex;
}

namespace {

bool ValidName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<BenchmarkId> ParseBenchmarkKey(std::string_view key_view) {
  const std::string key(key_view);
  BenchmarkId id;
  const size_t slash = key_view.find('/');
  if (slash == std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("benchmark key '", key, "' has no '/': expected suite/name{k=v,...}"));
  }
  id.suite = std::string(key_view.substr(0, slash));
  std::string_view rest = key_view.substr(slash + 1);
  const size_t brace = rest.find('{');
  id.name = std::string(rest.substr(0, brace));
  if (!ValidName(id.suite) || !ValidName(id.name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "benchmark key '", key, "': suite and name must be non-empty [A-Za-z0-9_.-]"));
  }
  if (brace == std::string_view::npos) {
    PERFGATE_RETURN_IF_ERROR(ValidateBenchmarkId(id, absl::StrCat("benchmark key '", key, "'")));
    return id;
  }
  if (rest.back() != '}') {
    return absl::InvalidArgumentError(absl::StrCat("benchmark key '", key, "' lacks a closing '}'"));
  }
  std::string_view body = rest.substr(brace + 1, rest.size() - brace - 2);
  while (!body.empty()) {
    const size_t comma = body.find(',');
    std::string_view kv = body.substr(0, comma);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("benchmark key '", key, "': parameter '", std::string(kv), "' is not k=v"));
    }
    if (!id.params.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1))).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("benchmark key '", key, "': parameter '", std::string(kv.substr(0, eq)),
                       "' appears twice"));
    }
    if (comma == std::string_view::npos) break;
    body.remove_prefix(comma + 1);
  }
  PERFGATE_RETURN_IF_ERROR(ValidateBenchmarkId(id, absl::StrCat("benchmark key '", key, "'")));
  if (id.Key() != key) {
    return absl::InvalidArgumentError(absl::StrCat("benchmark key '", key, "' is not in canonical form; expected '",
                                                   id.Key(), "' (parameters sorted by name)"));
  }
  return id;
}

bool BenchmarkValueChar(char c) {
  return c > 0x20 && c < 0x7f && c != '{' && c != '}' && c != ',' && c != '=' && c != '"' &&
         c != '\'' && c != '\\';
}

absl::Status ValidateBenchmarkId(const BenchmarkId& id, std::string_view field) {
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(field), ": ", what));
  };
  const std::string name_rule =
      absl::StrCat("must be 1 to ", kMaxBenchmarkToken, " characters of [A-Za-z0-9_.-]");
  if (!ValidName(id.suite) || id.suite.size() > kMaxBenchmarkToken) return bad("suite " + name_rule);
  if (!ValidName(id.name) || id.name.size() > kMaxBenchmarkToken) return bad("name " + name_rule);
  if (id.params.size() > kMaxBenchmarkParams) {
    return bad(absl::StrCat(id.params.size(), " parameters; at most ", kMaxBenchmarkParams));
  }
  for (const auto& [k, v] : id.params) {
    if (!ValidName(k) || k.size() > kMaxBenchmarkToken) return bad("parameter names " + name_rule);
    if (v.empty() || v.size() > kMaxBenchmarkToken ||
        !std::all_of(v.begin(), v.end(), BenchmarkValueChar)) {
      return bad(absl::StrCat("parameter '", k, "' must be 1 to ", kMaxBenchmarkToken,
                              " printable ASCII characters other than { } , = \" ' and backslash"));
    }
  }
  return absl::OkStatus();
}

std::string Slug(std::string_view text) {
  std::string out;
  bool dash = false;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (dash && !out.empty()) out += '-';
      dash = false;
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      dash = true;
    }
  }
  return out;
}

std::string CpuSkuKey(std::string_view vendor_id, std::string_view model_name) {
  std::string vendor;
  if (vendor_id == "AuthenticAMD") {
    vendor = "amd";
  } else if (vendor_id == "GenuineIntel") {
    vendor = "intel";
  } else {
    vendor = Slug(vendor_id);
    if (vendor.empty()) vendor = "unknown";
  }
  // Trademarks and the clock ("@ 2.30GHz") name no part; drop them first.
  std::string raw(model_name.substr(0, model_name.find('@')));
  for (const char* mark : {"(R)", "(r)", "(TM)", "(tm)"}) {
    for (size_t pos; (pos = raw.find(mark)) != std::string::npos;) raw.erase(pos, std::strlen(mark));
  }
  std::vector<std::string> kept;
  std::string token;
  const std::string slug = Slug(raw) + "-";
  for (char c : slug) {
    if (c != '-') {
      token += c;
      continue;
    }
    if (token == "processor" || token == "cpu") {
      // marketing words
    } else if (token == "core" && !kept.empty()) {
      kept.pop_back();  // "64-Core": a core count, not a model
    } else if (!(kept.empty() && token == vendor)) {
      kept.push_back(token);
    }
    token.clear();
  }
  std::string model;
  for (const std::string& t : kept) model += (model.empty() ? "" : "-") + t;
  if (model.empty()) model = "unknown";
  return absl::StrCat("cpu-", vendor, "-", model);
}

namespace {

// Memory as marketed, which the reported size only approaches (80 GB parts
// report ~79.6 GiB, 48 GB L40S ~44.5 GiB): the nearest size within 10 %.
long MarketedGb(uint64_t bytes) {
  static constexpr long kSizes[] = {16, 24, 32, 40, 48, 80, 94, 96, 141, 144, 180, 192};
  const double gib = static_cast<double>(bytes) / (1024.0 * 1024 * 1024);
  long best = std::lround(gib);
  double best_diff = 0.10 * gib;
  for (long s : kSizes) {
    const double diff = std::fabs(gib - static_cast<double>(s));
    if (diff <= best_diff) {
      best = s;
      best_diff = diff;
    }
  }
  return best;
}

// One SKU perfgate knows: the name the CUDA runtime and NVML report, the
// marketed memory (0: any), the PCI device id (upper 16 bits of NVML's
// pciDeviceId; 0: unknown) and the key. Keys follow design.md's examples.
struct KnownGpu {
  const char* name;
  long memory_gb;
  uint32_t pci_device;
  const char* key;
};

constexpr KnownGpu kKnownGpus[] = {
    {"NVIDIA H100 80GB HBM3", 80, 0x2330, "h100-sxm5-80gb"},
    {"NVIDIA H100 PCIe", 80, 0x2331, "h100-pcie-80gb"},
    {"NVIDIA H100 NVL", 94, 0x2321, "h100-nvl-94gb"},
    {"NVIDIA H200", 141, 0x2335, "h200-141gb"},
    {"NVIDIA H200 NVL", 141, 0x233b, "h200-nvl-141gb"},
    {"NVIDIA A100-SXM4-40GB", 40, 0x20b0, "a100-sxm4-40gb"},
    {"NVIDIA A100-SXM4-80GB", 80, 0x20b2, "a100-sxm4-80gb"},
    {"NVIDIA A100-PCIE-40GB", 40, 0x20f1, "a100-pcie-40gb"},
    {"NVIDIA A100 80GB PCIe", 80, 0x20b5, "a100-pcie-80gb"},
    {"NVIDIA L40S", 48, 0x26b9, "l40s-48gb"},
    {"NVIDIA L4", 24, 0x27b8, "l4-24gb"},
    {"NVIDIA B200", 180, 0x2901, "b200-180gb"},
    // GH200 comes with 96 GB HBM3 or 144 GB HBM3e behind names that do not
    // always say which (both carry 480 GB LPDDR5X): below, the memory decides.
    {"NVIDIA GH200 480GB", 96, 0x2342, "gh200-96gb"},
    {"NVIDIA GH200 144G HBM3e", 0, 0x2348, "gh200-144gb"},
};

bool SameName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string GpuSkuKey(std::string_view device_name, uint64_t total_memory_bytes,
                      uint32_t pci_device_id) {
  const long memory_gb = MarketedGb(total_memory_bytes);
  auto fits = [&](const KnownGpu& g) { return g.memory_gb == 0 || g.memory_gb == memory_gb; };
  for (const KnownGpu& g : kKnownGpus) {
    if (SameName(g.name, device_name) && fits(g)) return g.key;
  }
  std::string slug = Slug(device_name);
  if (slug.rfind("nvidia-", 0) == 0) slug.erase(0, 7);
  const std::string mem = absl::StrCat(memory_gb, "gb");
  // A GH200 by any name: its memory tells the two parts apart. The HBM3e
  // part may report as little as an H200 (~140 GiB, which rounds to 141),
  // so the line falls between the parts, not at either marketed size.
  if (slug.find("gh200") != std::string::npos) {
    return static_cast<double>(total_memory_bytes) >= 120.0 * (1ull << 30) ? "gh200-144gb"
                                                                           : "gh200-96gb";
  }
  // A name not in the table (a new driver's spelling): the PCI device id
  // still tells the form factor, where one was given.
  const uint32_t device = pci_device_id >> 16;
  if (device != 0) {
    for (const KnownGpu& g : kKnownGpus) {
      if (g.pci_device == device && fits(g)) return g.key;
    }
  }
  return slug.empty() ? "gpu-unknown-" + mem : slug + "-" + mem;
}

const std::vector<std::string>& KnownSkuExamples() {
  static const std::vector<std::string> kExamples = {
      "h100-sxm5-80gb", "h100-pcie-80gb", "h100-nvl-94gb",  "h200-141gb",
      "h200-nvl-141gb", "gh200-96gb",     "gh200-144gb",    "b200-180gb",     "a100-sxm4-40gb",
      "a100-sxm4-80gb", "a100-pcie-40gb", "a100-pcie-80gb", "l40s-48gb",
      "l4-24gb",        "cpu-amd-epyc",   "cpu-intel-xeon", "cpu-arm-neoverse",
  };
  return kExamples;
}

bool GlobMatch(std::string_view p, std::string_view t) {
  size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi;
      ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

std::string NewUuid() {
  std::random_device rd;
  std::uniform_int_distribution<unsigned> byte(0, 255);
  unsigned char b[16];
  for (auto& x : b) x = static_cast<unsigned char>(byte(rd));
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  char out[37];
  std::snprintf(out, sizeof out,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
}

bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::string> NormalizeRunId(const std::string& run_id) {
  if (!IsUuid(run_id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("run id '", run_id, "' is not a UUID (8-4-4-4-12 hex digits)"));
  }
  return absl::AsciiStrToLower(run_id);
}

}  // namespace perfgate
