// Identities of benchmarks and SKUs: the keys under which numbers are stored
// and compared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"

namespace perfgate {

/// The one grammar of benchmark identities, shared by ingest (every case a
/// run sends), Query.History and the result-file readers:
///   suite, name, parameter name: 1 to kMaxBenchmarkToken of [A-Za-z0-9_.-];
///   parameter value: 1 to kMaxBenchmarkToken printable ASCII characters
///   (0x21-0x7e) other than { } , = " ' and backslash;
///   at most kMaxBenchmarkParams parameters.
/// So a key BenchmarkId::Key() prints always parses back to the same id.
inline constexpr size_t kMaxBenchmarkToken = 128;
inline constexpr size_t kMaxBenchmarkParams = 32;
/// True when `c` may appear in a parameter value.
bool BenchmarkValueChar(char c);
/// OK when `id` follows the grammar; otherwise INVALID_ARGUMENT naming the
/// part (prefixed with `field`) that does not.
absl::Status ValidateBenchmarkId(const BenchmarkId& id, std::string_view field = "benchmark");

/// Parses "suite/name{k=v,...}" (the form BenchmarkId::Key() prints): the
/// grammar above, parameters sorted by name and each named once.
absl::StatusOr<BenchmarkId> ParseBenchmarkKey(std::string_view key);

/// Lower-case, non-alphanumerics folded into single dashes, trimmed.
std::string Slug(std::string_view text);

/// SKU key of a host CPU: "cpu-<vendor>-<model>", e.g.
/// ("AuthenticAMD", "AMD EPYC 7B13 64-Core Processor") -> "cpu-amd-epyc-7b13".
std::string CpuSkuKey(std::string_view vendor_id, std::string_view model_name);

/// SKU key of a GPU from its name and memory size, e.g.
/// ("NVIDIA H100 80GB HBM3", 85'520'809'984) -> "h100-sxm5-80gb": a table of
/// known SKUs by name and marketed memory; then, for a name not in it, the
/// PCI device id (NVML's pciDeviceId, device << 16 | vendor; 0 when unknown)
/// for the form factor; else the name's slug and the marketed memory in GB.
std::string GpuSkuKey(std::string_view device_name, uint64_t total_memory_bytes,
                      uint32_t pci_device_id = 0);

/// Families of SKU keys perfgate knows ("h100-*", "cpu-*", ...). A policy SKU
/// pattern must match at least one of these examples to be accepted.
const std::vector<std::string>& KnownSkuExamples();

/// Shell-style match: '*' any run of characters, '?' one character.
bool GlobMatch(std::string_view pattern, std::string_view text);

/// SHA-256 of `data` in lower-case hex.
std::string Sha256Hex(std::string_view data);

/// A fresh random (version 4) UUID in canonical text form.
std::string NewUuid();

/// True when s is a canonical UUID (8-4-4-4-12 hex digits).
bool IsUuid(std::string_view s);

/// A run id in the lower-case form PostgreSQL prints UUIDs in, the form
/// every comparison of run ids uses; INVALID_ARGUMENT when it is not a UUID.
absl::StatusOr<std::string> NormalizeRunId(const std::string& run_id);

}  // namespace perfgate
