#include "gpu/device_memory_ledger.h"

#include <algorithm>
#include <map>

namespace accelkv {
namespace gpu {

std::shared_ptr<DeviceMemoryLedger> DeviceMemoryLedger::ForDevice(const std::string& key,
                                                                  uint64_t capacity) {
  static std::mutex mu;
  static auto* ledgers = new std::map<std::string, std::weak_ptr<DeviceMemoryLedger>>();
  std::lock_guard<std::mutex> l(mu);
  std::weak_ptr<DeviceMemoryLedger>& slot = (*ledgers)[key];
  std::shared_ptr<DeviceMemoryLedger> ledger = slot.lock();
  if (ledger == nullptr) {
    ledger = std::make_shared<DeviceMemoryLedger>(capacity);
    slot = ledger;
  } else {
    std::lock_guard<std::mutex> lc(ledger->mu_);
    ledger->capacity_ = std::max(ledger->capacity_, capacity);
  }
  return ledger;
}

bool DeviceMemoryLedger::TryReserve(uint64_t bytes) {
  std::lock_guard<std::mutex> l(mu_);
  if (bytes > capacity_ - reserved_) return false;
  reserved_ += bytes;
  return true;
}

void DeviceMemoryLedger::Release(uint64_t bytes) {
  std::lock_guard<std::mutex> l(mu_);
  reserved_ -= bytes;
}

uint64_t DeviceMemoryLedger::capacity() const {
  std::lock_guard<std::mutex> l(mu_);
  return capacity_;
}

uint64_t DeviceMemoryLedger::reserved() const {
  std::lock_guard<std::mutex> l(mu_);
  return reserved_;
}

}  // namespace gpu
}  // namespace accelkv
