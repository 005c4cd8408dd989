// Clang thread-safety annotations (no-ops under GCC). Document which mutex
// guards what: GUARDED_BY(mu_), REQUIRES(mu_).
#pragma once

#if defined(__clang__)
#define ACCELKV_TSA(x) __attribute__((x))
#else
#define ACCELKV_TSA(x)
#endif

#define GUARDED_BY(x) ACCELKV_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) ACCELKV_TSA(pt_guarded_by(x))
#define REQUIRES(...) ACCELKV_TSA(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) ACCELKV_TSA(locks_excluded(__VA_ARGS__))
