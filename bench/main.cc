// accelkv-bench: runs workloads on AccelKV, RocksDB and LevelDB side by side
// and reports throughput, latency, amplification, CPU and memory, verifying
// every read. Exit status: 0 all verified, 1 bad usage or an engine that
// could not run, 2 a wrong or missing value (verification failure).
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#ifdef ACCELKV_BENCH_WITH_ACCELKV
#include "compact_workload.h"
#endif
#include "cpu_stress.h"
#include "flags.h"
#include "report.h"
#include "runner.h"

int main(int argc, char** argv) {
  using namespace accelkv_bench;
  BenchFlags flags;
  std::string error;
  if (!ParseFlags(argc, argv, &flags, &error)) {
    std::cerr << "accelkv-bench: " << error << "\n";
    return 1;
  }
  if (flags.help) {
    std::cout << Usage();
    return 0;
  }

  std::ostream* json = nullptr;
  std::ofstream json_file;
  if (flags.json == "-") {
    json = &std::cout;
  } else if (!flags.json.empty()) {
    json_file.open(flags.json, std::ios::app);
    if (!json_file) {
      std::cerr << "accelkv-bench: cannot open " << flags.json << " for appending\n";
      return 1;
    }
    json = &json_file;
  }
  // With JSON on stdout, everything human-readable goes to stderr.
  std::ostream& human = flags.json == "-" ? std::cerr : std::cout;

  if (IsCompactRun(flags)) {
#ifdef ACCELKV_BENCH_WITH_ACCELKV
    if (!flags.quiet) {
      human << "accelkv-bench: workload compact; executors";
      for (const std::string& e : flags.executors) human << " " << e;
      human << "; num " << flags.num << ", key " << flags.key_size << " B, value "
            << flags.value_size << " B, seed " << flags.seed << "\n";
    }
    std::vector<CompactResult> compact_results;
    const int compact_status = RunCompactWorkload(flags, human, json, &compact_results);
    human << "\n" << FormatCompactTable(compact_results);
    return compact_status;
#else
    std::cerr << "accelkv-bench: workload compact needs AccelKV (ACCELKV_BENCH_WITH_ACCELKV)\n";
    return 1;
#endif
  }

  if (!flags.quiet) {
    human << "accelkv-bench: engines";
    for (const std::string& e : flags.engines) human << " " << e;
    human << "; workloads";
    for (const std::string& w : flags.workloads) human << " " << w;
    human << "; num " << flags.num << ", ops " << flags.ops;
    if (flags.duration > 0) human << ", duration " << flags.duration << " s";
    human << ", threads " << flags.threads << ", key " << flags.key_size << " B, value "
          << flags.value_size << " B, seed " << flags.seed << ", sync "
          << (flags.sync ? "on" : "off") << ", stress-cpu " << flags.stress_cpu << "\n";
  }

  CpuStress stress;
  if (flags.stress_cpu > 0) stress.Start(flags.stress_cpu);

  Runner runner(flags, &std::cerr, &stress);
  runner.SetResultCallback([&](const WorkloadResult& r) {
    if (json != nullptr) {
      *json << ResultToJson(r, /*include_engine_stats=*/true) << "\n";
      json->flush();
    }
  });

  std::vector<WorkloadResult> results;
  int status = 0;
  for (const std::string& engine : flags.engines) {
    std::string engine_error;
    const size_t before = results.size();
    if (!runner.RunEngine(engine, &results, &engine_error)) {
      const bool wrong_data = results.size() > before && !results.back().verified;
      std::cerr << "accelkv-bench: " << (wrong_data ? "VERIFICATION FAILED: " : "ERROR: ")
                << engine_error << "\n";
      status = wrong_data ? 2 : std::max(status, 1);
    }
  }
  stress.Stop();

  human << "\n" << FormatTable(results);
  return status;
}
