#include "version/version_set.h"

#include <algorithm>

#include "util/filename.h"
#include "version/current_file.h"
#include "version/version_builder.h"
#include "wal/log_reader.h"

namespace accelkv {

namespace {

// Keeps the first corruption a MANIFEST reader reports.
class ManifestReporter final : public log::Reader::Reporter {
 public:
  void Corruption(size_t bytes, const Status& s) override {
    if (status.ok()) status = s;
  }
  Status status;
};

}  // namespace

VersionSet::VersionSet(std::string dbname, const Options* options, TableCache* table_cache,
                       const InternalKeyComparator* icmp)
    : env_(options->env),
      dbname_(std::move(dbname)),
      options_(options),
      table_cache_(table_cache),
      icmp_(icmp),
      compact_pointers_(options->num_levels) {
  AppendVersion(
      new Version(options_, icmp_, table_cache_, std::vector<LevelFiles>(options_->num_levels)));
}

VersionSet::~VersionSet() {
  current_->Unref();
  // Versions still referenced (a violated precondition) must not call back.
  for (Version* v : live_versions_) v->vset_ = nullptr;
  descriptor_log_.reset();
  if (descriptor_file_ != nullptr) descriptor_file_->Close();  // nothing unsynced is pending
}

void VersionSet::AppendVersion(Version* v) {
  v->vset_ = this;
  live_versions_.insert(v);
  v->Ref();
  Version* old = current_;
  current_ = v;
  if (old != nullptr) old->Unref();
}

void VersionSet::RemoveVersion(Version* v) { live_versions_.erase(v); }

void VersionSet::AddLiveFiles(std::set<uint64_t>* live) const {
  for (const Version* v : live_versions_) {
    for (int level = 0; level < v->num_levels(); level++) {
      for (const FileMetaPtr& f : v->files(level)) live->insert(f->number);
    }
  }
}

void VersionSet::EncodeSnapshot(std::string* record) const {
  VersionEdit edit;
  edit.SetComparatorName(options_->comparator->Name());
  edit.SetLogNumber(log_number_);
  edit.SetNextFile(next_file_number_);
  edit.SetLastSequence(LastSequence());
  for (int level = 0; level < NumLevels(); level++) {
    if (!compact_pointers_[level].empty()) {
      InternalKey key;
      key.DecodeFrom(compact_pointers_[level]);
      edit.SetCompactPointer(level, key);
    }
    for (const FileMetaPtr& f : current_->files(level)) edit.AddFile(level, *f);
  }
  edit.EncodeTo(record);
}

void VersionSet::AbandonManifest(uint64_t manifest_number, bool freshly_created) {
  descriptor_log_.reset();
  if (descriptor_file_ != nullptr) {
    descriptor_file_->Close();  // its tail is of unknown fate; errors add nothing
    descriptor_file_.reset();
  }
  if (!freshly_created) return;
  // SetCurrentFile may have renamed CURRENT into place before it failed; a
  // MANIFEST that CURRENT names (or might name) must stay.
  const std::string fname = DescriptorFileName(dbname_, manifest_number);
  std::string current;
  Status s = ReadFileToString(env_, CurrentFileName(dbname_), &current);
  const std::string base = fname.substr(fname.rfind('/') + 1);
  if (s.ok() && current != base + "\n") env_->RemoveFile(fname);
}

Status VersionSet::LogAndApply(VersionEdit* edit, std::mutex* mu) {
  if (edit->has_log_number()) {
    if (edit->log_number() < log_number_ || edit->log_number() >= next_file_number_) {
      return Status::InvalidArgument("version edit log number " +
                                     std::to_string(edit->log_number()) + " out of range");
    }
  } else {
    edit->SetLogNumber(log_number_);
  }
  for (const auto& [level, key] : edit->compact_pointers()) {
    if (level < 0 || level >= NumLevels() || key.Encode().size() < kInternalKeyTrailerSize) {
      return Status::InvalidArgument("bad compact pointer in version edit");
    }
  }

  std::vector<LevelFiles> files;
  {
    Builder builder(options_, icmp_, current_);
    Status s = builder.Apply(*edit);
    if (s.ok()) s = builder.SaveTo(&files);
    if (!s.ok()) return s;
  }

  const bool new_manifest = (descriptor_log_ == nullptr);
  const uint64_t manifest_number = new_manifest ? NewFileNumber() : manifest_file_number_;
  edit->SetNextFile(next_file_number_);
  edit->SetLastSequence(LastSequence());

  std::string snapshot;
  if (new_manifest) EncodeSnapshot(&snapshot);
  std::string record;
  edit->EncodeTo(&record);
  auto* v = new Version(options_, icmp_, table_cache_, std::move(files));

  // MANIFEST I/O without the mutex. Callers serialize LogAndApply, so
  // descriptor_* and current_ do not change meanwhile.
  mu->unlock();
  Status s;
  if (new_manifest) {
    s = env_->NewWritableFile(DescriptorFileName(dbname_, manifest_number), &descriptor_file_);
    if (s.ok()) {
      descriptor_log_ = std::make_unique<log::Writer>(descriptor_file_.get());
      s = descriptor_log_->AddRecord(snapshot);
    }
  }
  if (s.ok()) s = descriptor_log_->AddRecord(record);
  if (s.ok()) s = descriptor_file_->Sync();
  if (s.ok() && new_manifest) s = SetCurrentFile(env_, dbname_, manifest_number);
  if (!s.ok()) AbandonManifest(manifest_number, new_manifest);
  mu->lock();

  if (!s.ok()) {
    delete v;
    return s;
  }
  AppendVersion(v);
  log_number_ = edit->log_number();
  manifest_file_number_ = manifest_number;
  for (const auto& [level, key] : edit->compact_pointers()) {
    compact_pointers_[level] = key.Encode().ToString();
  }
  return Status::OK();
}

Status VersionSet::Recover(bool* save_manifest) {
  const std::string current_name = CurrentFileName(dbname_);
  if (!env_->FileExists(current_name)) {
    return Status::Corruption("CURRENT file is missing", current_name);
  }
  std::string current;
  Status s = ReadFileToString(env_, current_name, &current);
  if (!s.ok()) return s;
  if (current.empty() || current.back() != '\n') {
    return Status::Corruption("CURRENT file does not end with a newline", current_name);
  }
  current.pop_back();
  uint64_t manifest_number;
  FileType type;
  if (!ParseFileName(current, &manifest_number, &type) || type != FileType::kDescriptorFile) {
    return Status::Corruption("CURRENT file does not name a MANIFEST", current_name);
  }
  const std::string manifest_name = dbname_ + "/" + current;
  if (!env_->FileExists(manifest_name)) {
    return Status::Corruption("CURRENT names a missing MANIFEST", manifest_name);
  }
  std::unique_ptr<SequentialFile> file;
  s = env_->NewSequentialFile(manifest_name, &file);
  if (!s.ok()) return s;

  bool have_log_number = false;
  bool have_next_file = false;
  bool have_last_sequence = false;
  uint64_t log_number = 0;
  uint64_t next_file = 0;
  SequenceNumber last_sequence = 0;
  std::vector<std::string> pointers(NumLevels());
  Builder builder(options_, icmp_, nullptr);
  {
    ManifestReporter reporter;
    log::Reader reader(file.get(), &reporter, /*checksum=*/true, /*initial_offset=*/0);
    Slice record;
    std::string scratch;
    while (s.ok() && reader.ReadRecord(&record, &scratch)) {
      VersionEdit edit;
      s = edit.DecodeFrom(record);
      if (s.ok() && edit.has_comparator() && edit.comparator() != options_->comparator->Name()) {
        s = Status::InvalidArgument(
            "comparator " + edit.comparator() + " of the database does not match",
            options_->comparator->Name());
      }
      if (s.ok()) s = builder.Apply(edit);
      if (!s.ok()) break;
      for (const auto& [level, key] : edit.compact_pointers()) {
        if (level >= NumLevels()) {
          s = Status::InvalidArgument("compact pointer at level " + std::to_string(level),
                                      "beyond num_levels");
          break;
        }
        pointers[level] = key.Encode().ToString();
      }
      if (edit.has_log_number()) {
        have_log_number = true;
        log_number = edit.log_number();
      }
      if (edit.has_next_file_number()) {
        have_next_file = true;
        next_file = edit.next_file_number();
      }
      if (edit.has_last_sequence()) {
        have_last_sequence = true;
        last_sequence = edit.last_sequence();
      }
    }
    if (s.ok() && !reporter.status.ok()) {
      s = Status::Corruption(manifest_name, reporter.status.message());
    }
  }
  if (s.ok() && !have_next_file) s = Status::Corruption("MANIFEST has no next-file number");
  if (s.ok() && !have_log_number) s = Status::Corruption("MANIFEST has no log number");
  if (s.ok() && !have_last_sequence) s = Status::Corruption("MANIFEST has no last sequence");
  std::vector<LevelFiles> files;
  if (s.ok()) s = builder.SaveTo(&files);
  if (!s.ok()) {
    if (s.IsCorruption() && s.message().find(manifest_name) == std::string::npos) {
      return Status::Corruption(manifest_name, s.message());
    }
    return s;
  }

  AppendVersion(new Version(options_, icmp_, table_cache_, std::move(files)));
  next_file_number_ = next_file;
  MarkFileNumberUsed(manifest_number);
  MarkFileNumberUsed(log_number);
  for (int level = 0; level < NumLevels(); level++) {
    for (const FileMetaPtr& f : current_->files(level)) MarkFileNumberUsed(f->number);
  }
  manifest_file_number_ = manifest_number;
  log_number_ = log_number;
  SetLastSequence(last_sequence);
  compact_pointers_ = std::move(pointers);
  *save_manifest = true;
  return Status::OK();
}

}  // namespace accelkv
