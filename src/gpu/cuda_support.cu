#include "gpu/cuda_support.h"

#include <time.h>

#include <cstdlib>
#include <cstring>
#include <string>

#ifdef __linux__
#include <sys/prctl.h>
#endif

namespace accelkv {
namespace gpu {

Status CudaFailure(const char* stage, cudaError_t e) {
  return Status::Aborted(std::string("gpu: ") + stage + ": " + cudaGetErrorName(e),
                         cudaGetErrorString(e));
}

bool NapWaits() {
  // Only the default ("block"): "poll" leaves the naps out, and "spin" and
  // "yield" (the device's schedule) wait as that schedule does.
  static const bool nap = [] {
    const char* v = std::getenv("ACCELKV_GPU_WAIT");
    return v == nullptr || std::strcmp(v, "block") == 0;
  }();
  return nap;
}

void Nap() {
#ifdef __linux__
  const int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  prctl(PR_SET_TIMERSLACK, 1000, 0, 0, 0);
#endif
  const timespec nap{0, static_cast<long>(kNapMicros * 1000)};
  nanosleep(&nap, nullptr);
#ifdef __linux__
  if (slack > 0) prctl(PR_SET_TIMERSLACK, slack, 0, 0, 0);
#endif
}

cudaError_t SyncStream(cudaStream_t st) {
  return WaitDevice([st] { return cudaStreamQuery(st); },
                    [st] { return cudaStreamSynchronize(st); });
}

cudaError_t UploadKeyLists(const KeyList& a, const KeyList& b, const HostUpload& upload,
                           JobAllocations* mem, KeyListView* da, KeyListView* db) {
  uint8_t* bytes = nullptr;
  uint64_t* offsets = nullptr;
  cudaError_t e = mem->Alloc(&bytes, a.bytes.size() + b.bytes.size());
  if (e == cudaSuccess) e = mem->Alloc(&offsets, a.offsets.size() + b.offsets.size());
  if (e == cudaSuccess) e = upload(bytes, a.bytes.data(), a.bytes.size());
  if (e == cudaSuccess) e = upload(bytes + a.bytes.size(), b.bytes.data(), b.bytes.size());
  if (e == cudaSuccess) e = upload(offsets, a.offsets.data(), a.offsets.size() * 8);
  if (e == cudaSuccess) {
    e = upload(offsets + a.offsets.size(), b.offsets.data(), b.offsets.size() * 8);
  }
  *da = KeyListView{bytes, offsets, a.size()};
  *db = KeyListView{bytes + a.bytes.size(), offsets + a.offsets.size(), b.size()};
  return e;
}

cudaError_t GrowEvents(std::vector<cudaEvent_t>* events, size_t n, unsigned int flags) {
  while (events->size() < n) {
    cudaEvent_t ev;
    const cudaError_t e = cudaEventCreateWithFlags(&ev, flags);
    if (e != cudaSuccess) return e;
    events->push_back(ev);
  }
  return cudaSuccess;
}

}  // namespace gpu
}  // namespace accelkv
