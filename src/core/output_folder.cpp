#include "core/output_folder.hpp"

#include <algorithm>
#include <system_error>

#include "core/error.hpp"
#include "core/outputs.hpp"

namespace fedavg::core {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A file or folder a run writes into its output folder (`config`: a run without --config prepares DIR/config).
bool is_run_file(const fs::directory_entry& e, bool config) {
  const std::string name = e.path().filename().string();
  if (e.is_directory()) return config && name == "config";
  for (const char* tail :
       {".h5", ".h5.tmp", "_metrics.csv", "_ranks.json", "_stats.txt", "_embeddings.txt", ".w2v.txt", ".w2v.bin"})
    if (ends_with(name, tail)) return true;
  return false;
}

bool holds_checkpoint(const std::vector<std::string>& files) {
  return std::any_of(files.begin(), files.end(), [](const std::string& f) { return ends_with(f, ".h5"); });
}

// What only a run that ended writes: its statistics and embeddings.
bool holds_results(const std::vector<std::string>& files) {
  return std::any_of(files.begin(), files.end(), [](const std::string& f) {
    for (const char* tail : {"_stats.txt", "_embeddings.txt", ".w2v.txt", ".w2v.bin"})
      if (ends_with(f, tail)) return true;
    return false;
  });
}

void remove_tree(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
  if (ec) throw Error(p.string() + ": cannot remove: " + ec.message());
}

std::string list(const std::vector<std::string>& files) {
  std::string out;
  for (const auto& f : files) out += (out.empty() ? "" : ", ") + f;
  return out;
}

// A run's outputs are its own files: one that is a link would make a run read, move or replace another file.
void refuse_links(const fs::path& dir, const std::vector<std::string>& files) {
  for (const auto& f : files)
    if (fs::is_symlink(dir / f))
      throw InputError("output folder " + dir.string() + ": " + f +
                       " is a link; a run's outputs must be files of its own: remove the link");
}

}  // namespace

std::vector<std::string> OutputFolder::run_files(const fs::path& dir, bool config) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (is_run_file(e, config)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> OutputFolder::claim(const fs::path& dir, bool resume, bool overwrite, bool prepares_config) {
  ensure_writable_dir(dir);
  const fs::path previous = dir / kPrevious;
  const auto files = run_files(dir, prepares_config);
  refuse_links(dir, files);
  if (resume) {
    if (!holds_checkpoint(files) && fs::exists(previous))
      throw InputError("output folder " + dir.string() + ": nothing to resume, but " + previous.string() +
                       " holds the run an interrupted --overwrite moved aside: move its files back to resume it");
    if (!holds_checkpoint(files))
      throw InputError(
          "output folder " + dir.string() + ": no checkpoint (NAME.h5) to resume from" +
          (files.empty() ? std::string()
                         : " (" + list(files) + " is what a run that stopped before its first " + "checkpoint left)") +
          ": run the same command without --resume");
    return {};
  }
  if (!overwrite && !files.empty() && !holds_checkpoint(files) && !holds_results(files) && !fs::exists(previous)) {
    // A set-up or a run that stopped before its first checkpoint: nothing there can be resumed or lost.
    for (const auto& f : files) remove_tree(dir / f);
    return files;
  }
  if (!overwrite) {
    if (!files.empty() && fs::exists(previous))
      throw InputError("output folder " + dir.string() + " holds what an interrupted --overwrite left (" + list(files) +
                       ") and, in " + previous.string() +
                       ", the run it was replacing: --overwrite replaces that run, or move its files back");
    if (!files.empty())
      throw InputError("output folder " + dir.string() + " holds an earlier run (" + list(files) +
                       "): --resume continues it, --overwrite replaces it (kept until the new run's first "
                       "checkpoint)");
    if (fs::exists(previous))
      throw InputError("output folder " + dir.string() + ": " + previous.string() +
                       " holds the run an interrupted --overwrite moved aside: --overwrite replaces it, or move its "
                       "files back");
    return {};
  }
  if (fs::exists(previous)) {
    if (holds_checkpoint(files)) {
      remove_tree(previous);  // the run being replaced reached its checkpoint: what it replaced may go
    } else {
      // An interrupted --overwrite: the files here never reached a checkpoint, .previous holds the finished run.
      for (const auto& f : files) remove_tree(dir / f);
      return {};
    }
  }
  if (files.empty()) return {};
  std::error_code ec;
  fs::create_directory(previous, ec);
  if (ec) throw Error(previous.string() + ": cannot create: " + ec.message());
  for (const auto& f : files) {
    fs::rename(dir / f, previous / f, ec);
    if (ec) throw Error((dir / f).string() + ": cannot move into " + previous.string() + ": " + ec.message());
  }
  return {};
}

void OutputFolder::commit(const fs::path& dir) {
  const fs::path previous = dir / kPrevious;
  if (fs::exists(previous)) remove_tree(previous);
}

}  // namespace fedavg::core
