// Large transient buffers backed by transparent huge pages. Memory touched
// for the first time costs a page fault per 4 KiB page; a 26 MB result file
// and the parser's buffers for it come to ~10 000 faults, which on a
// virtual machine cost more than parsing the file (0.12 s against 0.003 s
// for 42 MB on the 2-core VM of docs/performance.md). One fault per 2 MiB
// page instead, where the kernel allows it.
#pragma once

#include <cstddef>

namespace perfgate {

/// Asks the kernel to back the whole 2 MiB pages inside [p, p + bytes) with
/// transparent huge pages (madvise MADV_HUGEPAGE). Call it before the memory
/// is first written. Does nothing for a range smaller than a huge page, or
/// where transparent huge pages are off ("never"): only a hint.
void AdviseHugePages(void* p, size_t bytes);

}  // namespace perfgate
