// Insert and lookup cost of MemTable (B+-tree index): N db_bench keys,
// random among 120M, 128-byte values, huge-page arena; R rounds.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>
#include "accelkv/comparator.h"
#include "memtable/memtable.h"
#include "util/internal_key.h"
using namespace accelkv;
int main(int argc, char** argv) {
  const size_t n = argc > 1 ? atol(argv[1]) : 400000;
  const int rounds = argc > 2 ? atoi(argv[2]) : 5;
  InternalKeyComparator cmp(BytewiseComparator());
  std::string value(128, 'v');
  for (int r = 0; r < rounds; r++) {
    std::mt19937_64 rng(r + 1);
    std::vector<std::string> keys(n);
    for (auto& k : keys) {
      char b[17];
      snprintf(b, sizeof b, "%016llu", (unsigned long long)(rng() % 120000000));
      k = b;
    }
    auto* mem = new MemTable(cmp, true, true);
    mem->Ref();
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < n; i++) mem->Add(i + 1, ValueType::kValue, keys[i], value);
    auto t1 = std::chrono::steady_clock::now();
    size_t found = 0;
    std::string v;
    Status s;
    for (size_t i = 0; i < n; i++) {
      LookupKey lk(keys[i], n + 1);
      if (mem->Get(lk, &v, &s)) found++;
    }
    auto t2 = std::chrono::steady_clock::now();
    printf("insert %.1f ns/op  get %.1f ns/op  found %zu\n",
           std::chrono::duration<double, std::nano>(t1 - t0).count() / n,
           std::chrono::duration<double, std::nano>(t2 - t1).count() / n, found);
    mem->Unref();
  }
}
