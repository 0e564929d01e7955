#include "measure/validity.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace perfgate {
namespace {

std::string Device(const DeviceHealth& d) {
  return absl::StrCat("GPU ", d.index, " (pci ", d.pci_bus_id, ")");
}

template <typename T>
void CounterMoved(const DeviceHealth& d, const char* what, const std::optional<T>& before,
                  const std::optional<T>& after, std::vector<std::string>& out) {
  if (before && after && *after != *before) {
    out.push_back(absl::StrCat(Device(d), ": ", what, " went from ", *before, " to ", *after,
                               " during the run"));
  }
}

bool Below(const std::optional<uint32_t>& current, const std::optional<uint32_t>& max) {
  return current && max && *current < *max;
}

std::string Link(const std::optional<uint32_t>& gen, const std::optional<uint32_t>& width) {
  return absl::StrCat("gen ", gen ? absl::StrCat(*gen) : std::string("?"), " x",
                      width ? absl::StrCat(*width) : std::string("?"));
}

const char* Mig(bool enabled) { return enabled ? "enabled" : "disabled"; }

}  // namespace

std::vector<std::string> InvalidForGatingReasons(const std::vector<DeviceHealth>& start,
                                                 const std::vector<DeviceHealth>& end,
                                                 const std::vector<CaseThrottleCount>& cases) {
  std::vector<std::string> out;
  for (const CaseThrottleCount& c : cases) {
    if (c.samples > 0 && c.throttled > kMostSamplesFraction * c.samples) {
      out.push_back(absl::StrCat("case ", c.benchmark, ": ", c.throttled, " of ", c.samples,
                                 " samples throttled (more than half)"));
    }
  }
  for (const DeviceHealth& s : start) {
    const DeviceHealth* e = nullptr;
    for (const DeviceHealth& candidate : end) {
      if (candidate.pci_bus_id == s.pci_bus_id) e = &candidate;
    }
    if (e == nullptr) {
      out.push_back(absl::StrCat(Device(s), ": present at the start of the run, gone at its end"));
      continue;
    }
    CounterMoved(s, "ECC corrected errors (volatile)", s.ecc_volatile_corrected,
                 e->ecc_volatile_corrected, out);
    CounterMoved(s, "ECC uncorrected errors (volatile)", s.ecc_volatile_uncorrected,
                 e->ecc_volatile_uncorrected, out);
    CounterMoved(s, "ECC corrected errors (aggregate)", s.ecc_aggregate_corrected,
                 e->ecc_aggregate_corrected, out);
    CounterMoved(s, "ECC uncorrected errors (aggregate)", s.ecc_aggregate_uncorrected,
                 e->ecc_aggregate_uncorrected, out);
    CounterMoved(s, "rows remapped for correctable errors", s.remapped_rows_corrected,
                 e->remapped_rows_corrected, out);
    CounterMoved(s, "rows remapped for uncorrectable errors", s.remapped_rows_uncorrected,
                 e->remapped_rows_uncorrected, out);

    const bool width_low = Below(s.pcie_width, s.pcie_width_max) || Below(e->pcie_width, e->pcie_width_max);
    const bool gen_low = Below(s.pcie_gen, s.pcie_gen_max) && Below(e->pcie_gen, e->pcie_gen_max);
    if (width_low || gen_low) {
      // The reading that shows the fault: the end one unless only the start does.
      const DeviceHealth& r = Below(e->pcie_width, e->pcie_width_max) || gen_low ? *e : s;
      out.push_back(absl::StrCat(Device(s), ": PCIe link ", Link(r.pcie_gen, r.pcie_width),
                                 " below its maximum ", Link(r.pcie_gen_max, r.pcie_width_max)));
    }

    if (s.mig_enabled && e->mig_enabled && *s.mig_enabled != *e->mig_enabled) {
      out.push_back(absl::StrCat(Device(s), ": MIG mode changed from ", Mig(*s.mig_enabled), " to ",
                                 Mig(*e->mig_enabled), " during the run"));
    }

    std::set<uint32_t> others;
    if (s.other_process_pids) others.insert(s.other_process_pids->begin(), s.other_process_pids->end());
    if (e->other_process_pids) {
      // At the start the agent holds no CUDA context, so everything listed is
      // someone else's. At the end its own context is listed too; when it
      // could not be recognised by pid (a container), one process that was
      // not there at the start is taken to be the agent's.
      std::vector<uint32_t> end_others = *e->other_process_pids;
      if (!e->self_listed) {
        const std::vector<uint32_t> at_start =
            s.other_process_pids ? *s.other_process_pids : std::vector<uint32_t>{};
        auto fresh = std::find_if(end_others.begin(), end_others.end(), [&](uint32_t pid) {
          return std::find(at_start.begin(), at_start.end(), pid) == at_start.end();
        });
        if (fresh != end_others.end()) end_others.erase(fresh);
      }
      others.insert(end_others.begin(), end_others.end());
    }
    if (!others.empty()) {
      out.push_back(absl::StrCat(Device(s), ": ", others.size(), " other compute process",
                                 others.size() == 1 ? "" : "es", " shared the GPU (pid ",
                                 absl::StrJoin(others, ", "), ")"));
    }
  }
  return out;
}

}  // namespace perfgate
