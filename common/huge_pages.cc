#include "common/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace perfgate {

void AdviseHugePages(void* p, size_t bytes) {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t last = (begin + bytes) & ~(kHugePage - 1);
  if (p == nullptr || last <= first) return;
  // EINVAL where THP is not built in: the memory is as it was, only slower.
  madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

}  // namespace perfgate
