#include "key_state.h"

#include <sys/mman.h>

#include <algorithm>
#include <new>

#include "util/align.h"
#include "util/huge_pages.h"

namespace accelkv_bench {

namespace {
constexpr uint32_t kDeleteBit = 1;
uint32_t VersionOf(uint32_t word) { return word >> 1; }
bool IsDelete(uint32_t word) { return (word & kDeleteBit) != 0; }
}  // namespace

void KeyState::Unmap::operator()(Words* p) const { munmap(p, bytes); }

KeyState::KeyState(uint64_t capacity) : capacity_(capacity), stripes_(new std::mutex[kStripes]) {
  static_assert(sizeof(Words) == 8 && std::atomic<uint32_t>::is_always_lock_free);
  const size_t bytes =
      accelkv::AlignUp(std::max<uint64_t>(capacity, 1) * sizeof(Words), accelkv::kHugePageSize);
  char* p = accelkv::MapHugePages(bytes);
  if (p == nullptr) throw std::bad_alloc();
  // The mapping's zero bytes are every word's initial state (0: never
  // written); a lock-free atomic<uint32_t> is its value's bytes.
  words_ = std::unique_ptr<Words[], Unmap>(reinterpret_cast<Words*>(p), Unmap{bytes});
  // Fault every page in now, as the zeroing loop of the arrays this replaced
  // did, so that no run's timed part takes the page faults.
  constexpr size_t kWordsPerPage = 4096 / sizeof(Words);
  for (uint64_t i = 0; i < capacity; i += kWordsPerPage) {
    words_[i].issued.store(0, std::memory_order_relaxed);
  }
}

KeyState::WriteGuard::WriteGuard(KeyState* state, uint64_t index, bool is_delete)
    : state_(state), index_(index), is_delete_(is_delete), lock_(state->StripeFor(index)) {
  const uint32_t previous = state_->words_[index].issued.load(std::memory_order_relaxed);
  version_ = VersionOf(previous) + 1;
  state_->words_[index].issued.store((version_ << 1) | (is_delete ? kDeleteBit : 0),
                                     std::memory_order_release);
}

KeyState::WriteGuard::~WriteGuard() = default;

void KeyState::WriteGuard::Commit() {
  state_->words_[index_].committed.store((version_ << 1) | (is_delete_ ? kDeleteBit : 0),
                                         std::memory_order_release);
}

KeyState::ReadTicket KeyState::BeginRead(uint64_t index) const {
  return ReadTicket{words_[index].committed.load(std::memory_order_acquire)};
}

bool KeyState::CheckRead(uint64_t index, const ReadTicket& ticket, bool found, uint32_t version,
                         std::string* why) const {
  const uint32_t issued = words_[index].issued.load(std::memory_order_acquire);
  const uint32_t lo = VersionOf(ticket.committed);
  const uint32_t hi = VersionOf(issued);
  if (lo == 0 && preexisting_unknown_) return true;  // may hold a value from an earlier process
  if (found) {
    if (version < lo || version > hi) {
      *why = "read returned version " + std::to_string(version) + ", expected one in [" +
             std::to_string(lo) + ", " + std::to_string(hi) + "]";
      return false;
    }
    if (version == lo && IsDelete(ticket.committed)) {
      *why = "read found version " + std::to_string(version) + ", which was a delete";
      return false;
    }
    return true;
  }
  // Not found: fine if the key was absent or deleted when the read began,
  // or if a write that may be a delete raced with the read.
  if (lo == 0) return true;
  if (IsDelete(ticket.committed)) return true;
  if (hi > lo + 1) return true;
  if (hi == lo + 1 && IsDelete(issued)) return true;
  *why = "key not found, but version " + std::to_string(lo) + " was acknowledged before the read";
  return false;
}

bool KeyState::IsLive(uint64_t index) const {
  const uint32_t c = words_[index].committed.load(std::memory_order_relaxed);
  return VersionOf(c) != 0 && !IsDelete(c);
}

uint64_t KeyState::LiveKeys() const {
  uint64_t live = 0;
  for (uint64_t i = 0; i < capacity_; i++) live += IsLive(i) ? 1 : 0;
  return live;
}

}  // namespace accelkv_bench
