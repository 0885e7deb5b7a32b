// pgsim's allocation functions (the replaceable global operator new and delete, linked into the
// pgsim executable only): blocks of kAdviseBytes or more are advised onto transparent huge pages.
//
// Why (issue 13): the host pipeline writes every large array once, and on the development VM
// the page faults of that first touch, one per 4 KB, were most of reduce() and chain elimination
// (perf, 1M-node grid, one thread: 4.8 of reduce's 8.8% and 3.3 of elimination's 4.7% of the
// run were faults in assign_touched) and much of the parse. A 2 MB page takes one fault for 512.
// Where the kernel's THP mode is "madvise" (Debian's default, and this VM's) large blocks get
// none without the advice; under "always" it changes nothing, under "never" the kernel ignores it.
// Memory: only whole 2 MB pages inside a block are advised, so a block never grows its footprint
// past its own size (rounded to the huge pages it spans).
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t kHugePage = std::size_t(2) << 20;
// A smaller block holds no aligned huge page.
constexpr std::size_t kAdviseBytes = kHugePage;

void* allocate(std::size_t bytes) {
  void* p = std::malloc(bytes > 0 ? bytes : 1);
  if (p != nullptr && bytes >= kAdviseBytes) {
    const std::uintptr_t first = (reinterpret_cast<std::uintptr_t>(p) + kHugePage - 1) & ~(kHugePage - 1);
    const std::uintptr_t last = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kHugePage - 1);
    // Advice only: where it fails (no THP in this kernel) the block is as malloc made it.
    if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
  return p;
}

}  // namespace

void* operator new(std::size_t bytes) {
  for (;;) {
    if (void* p = allocate(bytes)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

// The array forms' defaults call these two.
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

// The nothrow forms' defaults call the ones above too, but a sanitizer's runtime defines every
// form this file leaves out: under AddressSanitizer its nothrow new (std::stable_sort's buffer in
// the IR-drop summary) then met this file's delete, a mismatch it aborts on. Defined here, every
// block comes from allocate() and goes back through free().
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
