// CpuRelax: the spin-wait hint (x86 PAUSE, Arm YIELD): a spinning thread
// yields pipeline resources to its hyper-thread sibling and stops
// speculating on the watched location; nothing elsewhere.
#pragma once

namespace accelkv {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace accelkv
