// DeviceMemoryLedger: the device memory that the GPU executors of one
// process have set aside for their running jobs, against one capacity per
// device. Each database opens its own executor (a hash-partitioned store
// opens several), and each executor's per-job budget is a fraction of the
// memory free when it was made, so their jobs together could outgrow the
// device. Before a job the executor reserves its estimated device bytes
// here; a job that does not fit what the other jobs left runs on the CPU
// at once (NotSupported: not a device failure) instead of failing to
// allocate partway.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "util/thread_annotations.h"

namespace accelkv {
namespace gpu {

class DeviceMemoryLedger {
 public:
  explicit DeviceMemoryLedger(uint64_t capacity) : capacity_(capacity) {}
  DeviceMemoryLedger(const DeviceMemoryLedger&) = delete;
  DeviceMemoryLedger& operator=(const DeviceMemoryLedger&) = delete;

  // The process's ledger for the device named key: made with capacity by
  // the first call while none is alive, shared by later calls until the
  // last holder lets go. A later call's larger capacity (more memory free
  // when its executor was made) raises it, so that no executor's budget
  // exceeds it.
  static std::shared_ptr<DeviceMemoryLedger> ForDevice(const std::string& key, uint64_t capacity);

  // Sets bytes aside if they fit beside what is reserved; false otherwise.
  bool TryReserve(uint64_t bytes) EXCLUDES(mu_);
  // Gives back bytes of an earlier TryReserve.
  void Release(uint64_t bytes) EXCLUDES(mu_);

  uint64_t capacity() const EXCLUDES(mu_);
  uint64_t reserved() const EXCLUDES(mu_);

 private:
  mutable std::mutex mu_;
  uint64_t capacity_ GUARDED_BY(mu_);
  uint64_t reserved_ GUARDED_BY(mu_) = 0;
};

// A reservation held for one job: released when it goes out of scope.
class LedgerReservation {
 public:
  LedgerReservation() = default;
  LedgerReservation(const LedgerReservation&) = delete;
  LedgerReservation& operator=(const LedgerReservation&) = delete;
  ~LedgerReservation() {
    if (ledger_ != nullptr) ledger_->Release(bytes_);
  }
  // Reserves bytes on ledger (none held yet); false if they do not fit.
  bool Take(DeviceMemoryLedger* ledger, uint64_t bytes) {
    if (!ledger->TryReserve(bytes)) return false;
    ledger_ = ledger;
    bytes_ = bytes;
    return true;
  }

 private:
  DeviceMemoryLedger* ledger_ = nullptr;
  uint64_t bytes_ = 0;
};

}  // namespace gpu
}  // namespace accelkv
