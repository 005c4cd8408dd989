// KeyState: what the benchmark wrote to each key of one key space, so every
// read can be judged: a value must carry a version no older than the last
// write acknowledged before the read began and no newer than the last write
// begun before it ended; a key the run wrote and did not delete must be found.
//
// Per key: `issued` (version of the last write begun, with a delete bit) and
// `committed` (the same for the last write acknowledged). Writes to one key
// are serialized by a striped lock held from BeginWrite to EndWrite, so the
// engine sees them in version order.
//
// Keys written before this process started (--use-existing) are "unknown":
// any self-consistent value or NotFound is accepted for them until the run
// writes them.
//
// Thread safety: all methods may be called concurrently, except Reset and
// LiveKeys, which need the key space quiescent.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace accelkv_bench {

class KeyState {
 public:
  explicit KeyState(uint64_t capacity);

  uint64_t capacity() const { return capacity_; }

  // Marks every key never written in this process as unknown (true) or as
  // absent (false, the default for a fresh database).
  void SetPreexisting(bool unknown) { preexisting_unknown_ = unknown; }

  // Write protocol: WriteGuard g = BeginWrite(i, is_delete); engine call;
  // g.Commit() only if the engine acknowledged (a failed write leaves the
  // key's outcome unknown and the run fails anyway).
  class WriteGuard {
   public:
    WriteGuard(KeyState* state, uint64_t index, bool is_delete);
    ~WriteGuard();
    WriteGuard(const WriteGuard&) = delete;
    WriteGuard& operator=(const WriteGuard&) = delete;
    uint32_t version() const { return version_; }
    void Commit();

   private:
    KeyState* state_;
    uint64_t index_;
    uint32_t version_;
    bool is_delete_;
    std::unique_lock<std::mutex> lock_;
  };

  struct ReadTicket {
    uint32_t committed;  // (version << 1) | deleted, at read start
  };
  ReadTicket BeginRead(uint64_t index) const;
  // Starts loading what a write or read of key index will touch (its state
  // words and its stripe's lock), so that a workload that knows its next key
  // one op ahead does not wait for those cache misses (at 100M keys the
  // state is 800 MB).
  void Prefetch(uint64_t index) const {
    __builtin_prefetch(&words_[index], 1, 3);
    __builtin_prefetch(&stripes_[index % kStripes], 1, 3);
  }
  // The version a write of key index begun now would carry: a hint for
  // prefetching (a concurrent write of the key may take it first).
  uint32_t NextWriteVersion(uint64_t index) const {
    return (words_[index].issued.load(std::memory_order_relaxed) >> 1) + 1;
  }
  // Judges a read that began with ticket and just ended. found: whether the
  // engine returned a value; version: the version the value carries (valid
  // only if found). False and *why set if the read is wrong.
  bool CheckRead(uint64_t index, const ReadTicket& ticket, bool found, uint32_t version,
                 std::string* why) const;

  // Keys whose last acknowledged write was a put (quiescent only); unknown
  // keys count as not live.
  uint64_t LiveKeys() const;
  // Whether key index's last acknowledged write was a put (quiescent only).
  bool IsLive(uint64_t index) const;
  // True when keys not written by this process may hold earlier data.
  bool AnyUnknown() const { return preexisting_unknown_; }

 private:
  static constexpr size_t kStripes = 4096;
  std::mutex& StripeFor(uint64_t index) { return stripes_[index % kStripes]; }

  // A key's two words share a cache line, so a write or a read misses once.
  struct alignas(8) Words {
    std::atomic<uint32_t> issued;
    std::atomic<uint32_t> committed;
  };
  // The words of every key, zeroed, in memory the kernel may back with 2 MiB
  // pages (accelkv::MapHugePages): at 120M keys they take 960 MB, and a
  // random access to 4 KiB pages missed the TLB as well as the cache.
  struct Unmap {
    size_t bytes;
    void operator()(Words* p) const;
  };

  KeyState(const KeyState&) = delete;
  KeyState& operator=(const KeyState&) = delete;

  uint64_t capacity_;
  bool preexisting_unknown_ = false;
  std::unique_ptr<Words[], Unmap> words_;
  std::unique_ptr<std::mutex[]> stripes_;
};

}  // namespace accelkv_bench
