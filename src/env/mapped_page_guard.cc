#include "env/mapped_page_guard.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>

namespace accelkv {

namespace {

// volatile: the stores around the touching loop must not be merged or moved
// across its loads (the handler reads it).
thread_local sigjmp_buf* volatile t_guard = nullptr;
struct sigaction g_previous;

void OnSigbus(int sig, siginfo_t* /*info*/, void* /*context*/) {
  sigjmp_buf* guard = t_guard;
  if (guard != nullptr) siglongjmp(*guard, 1);
  // Not a guarded read: let whoever handled SIGBUS before us handle it.
  sigaction(SIGBUS, &g_previous, nullptr);
  raise(sig);
}

void InstallHandler() {
  struct sigaction sa = {};
  sa.sa_sigaction = OnSigbus;
  // SA_NODEFER: SIGBUS stays unblocked in the handler, so jumping out of it
  // leaves the thread's signal mask as it was.
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, &g_previous);
}

size_t PageSize() {
  static const size_t size = [] {
    const long s = sysconf(_SC_PAGESIZE);
    return s > 0 ? static_cast<size_t>(s) : size_t{4096};
  }();
  return size;
}

}  // namespace

bool TouchMappedPages(const char* p, size_t n) {
  if (n == 0) return true;
  static std::once_flag installed;
  std::call_once(installed, InstallHandler);
  const size_t page = PageSize();
  sigjmp_buf jump;
  if (sigsetjmp(jump, 0) != 0) {
    t_guard = nullptr;
    sigset_t bus;
    sigemptyset(&bus);
    sigaddset(&bus, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &bus, nullptr);  // in case a handler ran with it blocked
    return false;
  }
  t_guard = &jump;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t end = begin + n;
  unsigned char sink = 0;
  for (uintptr_t a = begin; a < end; a = (a / page + 1) * page) {
    sink ^= *reinterpret_cast<const volatile unsigned char*>(a);
  }
  t_guard = nullptr;
  asm volatile("" : : "r"(sink));  // keep the loads
  return true;
}

}  // namespace accelkv
