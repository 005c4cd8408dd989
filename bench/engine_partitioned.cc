// PartitionedEngine: N instances of one engine, each in its own directory
// (PATH/p0 ... PATH/p<N-1>), keys routed by a hash (--partitions N). It is
// the hash-partitioned set-up of p2KVS reduced to what the harness needs:
// writers that pick different partitions never share a write queue, so the
// ingest rate grows with the writers, and each instance flushes and
// compacts its own tree with its own background threads. Every engine gets
// the same wrapper, so the numbers still compare stores.
//
// Thread safety: as Engine. The instances are independent; the wrapper
// itself holds no mutable state after Open.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <filesystem>
#include <memory>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "engine.h"
#include "engine_factories.h"

namespace accelkv_bench {
namespace {

// A cursor over the partitions' cursors in key order. Partitions hold
// disjoint keys, so the merge never meets one key twice.
class MergedCursor final : public Cursor {
 public:
  explicit MergedCursor(std::vector<std::unique_ptr<Cursor>> parts) : parts_(std::move(parts)) {}

  void Seek(std::string_view target) override {
    for (auto& c : parts_) c->Seek(target);
    Rebuild();
  }
  void SeekToFirst() override {
    for (auto& c : parts_) c->SeekToFirst();
    Rebuild();
  }
  bool Valid() const override { return !heap_.empty(); }
  void Next() override {
    Cursor* top = heap_.top();
    heap_.pop();
    top->Next();
    if (top->Valid()) heap_.push(top);
  }
  std::string_view key() const override { return heap_.top()->key(); }
  std::string_view value() const override { return heap_.top()->value(); }
  EngineStatus status() const override {
    for (const auto& c : parts_) {
      EngineStatus s = c->status();
      if (!s.ok()) return s;
    }
    return EngineStatus::Ok();
  }

 private:
  struct Greater {
    bool operator()(const Cursor* a, const Cursor* b) const { return a->key() > b->key(); }
  };
  void Rebuild() {
    heap_ = {};
    for (auto& c : parts_) {
      if (c->Valid()) heap_.push(c.get());
    }
  }

  std::vector<std::unique_ptr<Cursor>> parts_;
  std::priority_queue<Cursor*, std::vector<Cursor*>, Greater> heap_;  // smallest key on top
};

class PartitionedEngine final : public Engine {
 public:
  explicit PartitionedEngine(std::vector<std::unique_ptr<Engine>> parts)
      : parts_(std::move(parts)) {}

  std::string Name() const override { return parts_[0]->Name(); }

  EngineStatus Open(const std::string& path, const EngineProfile& profile) override {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return EngineStatus::Error("cannot create " + path + ": " + ec.message());
    for (size_t i = 0; i < parts_.size(); i++) {
      EngineStatus s = parts_[i]->Open(PartPath(path, i), profile);
      if (!s.ok()) {
        for (size_t j = 0; j < i; j++) parts_[j]->Close();
        return EngineStatus::Error("partition " + std::to_string(i) + ": " + s.message);
      }
    }
    return EngineStatus::Ok();
  }

  EngineStatus DestroyStore(const std::string& path) override {
    for (size_t i = 0; i < parts_.size(); i++) {
      EngineStatus s = parts_[i]->DestroyStore(PartPath(path, i));
      if (!s.ok()) return s;
    }
    return EngineStatus::Ok();
  }

  std::string EffectiveOptions() const override {
    return "partitions: " + std::to_string(parts_.size()) + " (each with the options below)\n" +
           parts_[0]->EffectiveOptions();
  }

  EngineStatus Put(std::string_view key, std::string_view value) override {
    return Part(key)->Put(key, value);
  }
  EngineStatus Get(std::string_view key, std::string* value) override {
    return Part(key)->Get(key, value);
  }
  EngineStatus Delete(std::string_view key) override { return Part(key)->Delete(key); }

  // Atomic only within one instance: a batch whose keys fall into two
  // partitions is refused rather than applied in two independent halves.
  EngineStatus Write(const std::vector<std::pair<std::string, std::string>>& puts) override {
    if (puts.empty()) return EngineStatus::Ok();
    Engine* target = Part(puts[0].first);
    for (const auto& kv : puts) {
      if (Part(kv.first) != target) {
        return EngineStatus::Error("a batch spanning partitions cannot be applied atomically");
      }
    }
    return target->Write(puts);
  }

  std::unique_ptr<Cursor> NewCursor() override {
    std::vector<std::unique_ptr<Cursor>> cursors;
    for (auto& p : parts_) cursors.push_back(p->NewCursor());
    return std::make_unique<MergedCursor>(std::move(cursors));
  }

  EngineStatus WaitForCompactions() override {
    for (size_t i = 0; i < parts_.size(); i++) {
      EngineStatus s = parts_[i]->WaitForCompactions();
      if (!s.ok()) return EngineStatus::Error("partition " + std::to_string(i) + ": " + s.message);
    }
    return EngineStatus::Ok();
  }

  std::string Stats() override {
    std::string out;
    for (size_t i = 0; i < parts_.size(); i++) {
      out += "== partition " + std::to_string(i) + " ==\n" + parts_[i]->Stats();
      if (!out.empty() && out.back() != '\n') out += '\n';
    }
    return out;
  }

  EngineStatus Close() override {
    EngineStatus first;
    for (auto& p : parts_) {
      EngineStatus s = p->Close();
      if (!s.ok() && first.ok()) first = s;
    }
    return first;
  }

 private:
  static std::string PartPath(const std::string& path, size_t i) {
    return path + "/p" + std::to_string(i);
  }
  Engine* Part(std::string_view key) const {
    return parts_[XXH3_64bits(key.data(), key.size()) % parts_.size()].get();
  }

  std::vector<std::unique_ptr<Engine>> parts_;
};

}  // namespace

std::unique_ptr<Engine> NewPartitionedEngine(const std::string& name, int partitions) {
  std::vector<std::unique_ptr<Engine>> parts;
  for (int i = 0; i < partitions; i++) {
    std::unique_ptr<Engine> e = CreateEngine(name);
    if (e == nullptr) return nullptr;
    parts.push_back(std::move(e));
  }
  if (parts.empty()) return nullptr;
  return std::make_unique<PartitionedEngine>(std::move(parts));
}

}  // namespace accelkv_bench
