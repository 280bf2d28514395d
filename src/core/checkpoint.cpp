#include "core/checkpoint.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <future>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/checksum.hpp"
#include "core/error.hpp"
#include "core/fault.hpp"

namespace fedavg::core {
namespace {

// HDF5 closes at exit what is still open. A file whose write failed (a full disk) cannot be closed, and that
// cleanup then crashes (HDF5 1.10), so it is turned off: every file here is closed, or dropped after a failure.
const bool kNoCleanupAtExit = [] { return H5dont_atexit() >= 0; }();

// HDF5's own account of the error just returned: the system's message where a system call failed ("No space
// left on device"), else the most specific description on its error stack; empty if the stack holds none.
std::string hdf5_reason() {
  struct Found {
    std::string system, specific;
  } found;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        auto& f = *static_cast<Found*>(data);
        const std::string desc = e->desc ? e->desc : "";
        const std::string key = "error message = '";
        const auto at = desc.find(key);
        if (f.system.empty() && at != std::string::npos) {
          const auto end = desc.find('\'', at + key.size());
          f.system = desc.substr(at + key.size(), end == std::string::npos ? std::string::npos : end - at - key.size());
        }
        if (f.specific.empty()) f.specific = desc;
        return 0;
      },
      &found);
  H5Eclear2(H5E_DEFAULT);
  return found.system.empty() ? found.specific : found.system;
}

// `what`, and why if HDF5 says.
[[noreturn]] void fail(const std::string& what) {
  const std::string why = hdf5_reason();
  throw Error(why.empty() ? what : what + ": " + why);
}

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what) : id_(id), close_(close) {
    if (id_ < 0) fail(what);
  }
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }
  // Closes it now, failing with `what` if that fails (closing a file writes what HDF5 still holds of it).
  void close(const std::string& what) {
    const herr_t rc = close_(id_);
    id_ = -1;
    if (rc < 0) fail(what);
  }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// The attribute of every dataset that holds its checksum (core/checksum.hpp).
constexpr const char* kChecksum = "xxh3";
// From this size on a dataset's checksum is taken on a thread of its own (about 1 ms of hashing).
constexpr std::size_t kThreadedChecksum = std::size_t{8} << 20;

void check(herr_t rc, const std::string& what) {
  if (rc < 0) fail(what);
}

template <typename T>
void put_attr(hid_t target, const char* name, hid_t type, const T& value, const std::string& file) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, file + ": HDF5 dataspace");
  Handle attr(H5Acreate2(target, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
              file + ": cannot create attribute " + name);
  check(H5Awrite(attr.get(), type, &value), file + ": cannot write attribute " + name);
}

template <typename T> T get_attr(hid_t target, const char* name, hid_t type, const std::string& file) {
  Handle attr(H5Aopen(target, name, H5P_DEFAULT), H5Aclose, file + ": attribute " + name + " is missing");
  T value{};
  check(H5Aread(attr.get(), type, &value), file + ": cannot read attribute " + name);
  return value;
}

// Variable-length UTF-8 text: what h5py and most readers take as a string (not bytes).
Handle utf8_type(const std::string& file) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, file + ": HDF5 string type");
  check(H5Tset_size(type.get(), H5T_VARIABLE), file + ": HDF5 string size");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), file + ": HDF5 string encoding");
  return type;
}

void put_string_attr(hid_t target, const char* name, const std::string& value, const std::string& file) {
  Handle type = utf8_type(file);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, file + ": HDF5 dataspace");
  Handle attr(H5Acreate2(target, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
              file + ": cannot create attribute " + name);
  const char* text = value.c_str();
  check(H5Awrite(attr.get(), type.get(), &text), file + ": cannot write attribute " + name);
}

std::string get_string_attr(hid_t target, const char* name, const std::string& file) {
  Handle attr(H5Aopen(target, name, H5P_DEFAULT), H5Aclose, file + ": attribute " + name + " is missing");
  Handle type(H5Aget_type(attr.get()), H5Tclose, file + ": attribute type");
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle mem = utf8_type(file);
    char* text = nullptr;
    check(H5Aread(attr.get(), mem.get(), &text), file + ": cannot read attribute " + name);
    std::string value = text ? text : "";
    H5free_memory(text);
    return value;
  }
  std::string value(H5Tget_size(type.get()), '\0');  // fixed-length, as older checkpoints hold it
  Handle mem(H5Tcopy(H5T_C_S1), H5Tclose, file + ": HDF5 string type");
  check(H5Tset_size(mem.get(), value.size()), file + ": HDF5 string size");
  check(H5Aread(attr.get(), mem.get(), value.data()), file + ": cannot read attribute " + name);
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

void put_strings(hid_t where, const char* name, const std::vector<std::string>& values, const std::string& file) {
  std::vector<const char*> texts;
  texts.reserve(values.size());
  for (const auto& v : values) texts.push_back(v.c_str());
  Handle type = utf8_type(file);
  const hsize_t n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose, file + ": HDF5 dataspace for " + name);
  Handle set(H5Dcreate2(where, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
             file + ": cannot create dataset " + name);
  auto sum = std::async(values.size() >= kThreadedChecksum / 16 ? std::launch::async : std::launch::deferred,
                        [&values] { return checksum(values); });  // as put_dataset's, strings of ~16 bytes
  if (n > 0)
    check(H5Dwrite(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, texts.data()),
          file + ": cannot write dataset " + name);
  put_attr(set.get(), kChecksum, H5T_NATIVE_UINT64, sum.get(), file);
}

void put_dataset(hid_t where, const std::string& name, hid_t file_type, hid_t mem_type, std::vector<hsize_t> dims,
                 const void* data, const std::string& file) {
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
               file + ": HDF5 dataspace for " + name);
  Handle set(H5Dcreate2(where, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
             file + ": cannot create dataset " + name);
  const auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get()));
  // A large dataset's checksum is taken on another thread while HDF5 writes the same values, so that it costs
  // the write no time; a small one's costs less than starting a thread.
  const std::size_t bytes = n * H5Tget_size(mem_type);
  auto sum = std::async(bytes >= kThreadedChecksum ? std::launch::async : std::launch::deferred,
                        [data, bytes] { return checksum(data, bytes); });
  if (n > 0)
    check(H5Dwrite(set.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), file + ": cannot write dataset " + name);
  put_attr(set.get(), kChecksum, H5T_NATIVE_UINT64, sum.get(), file);
}

// Throws naming the file and the dataset unless `set` carries the checksum `sum`.
void verify(hid_t set, const std::string& name, std::uint64_t sum, const std::string& file) {
  if (H5Aexists(set, kChecksum) <= 0)
    throw Error(file + ": dataset " + name +
                " carries no checksum (a checkpoint of an older version; it cannot "
                "be checked, so it is refused)");
  if (get_attr<std::uint64_t>(set, kChecksum, H5T_NATIVE_UINT64, file) != sum)
    throw Error(file + ": dataset " + name + " is damaged: its values do not match their checksum");
}

std::vector<std::string> get_strings(hid_t where, const char* name, const std::string& file) {
  Handle set(H5Dopen2(where, name, H5P_DEFAULT), H5Dclose, file + ": dataset " + name + " is missing");
  Handle space(H5Dget_space(set.get()), H5Sclose, file + ": dataspace of " + name);
  const auto n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) throw Error(file + ": cannot size dataset " + name);
  std::vector<char*> texts(static_cast<std::size_t>(n), nullptr);
  Handle type = utf8_type(file);
  if (n > 0)
    check(H5Dread(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, texts.data()), file + ": cannot read " + name);
  std::vector<std::string> out;
  for (char* s : texts) {
    out.emplace_back(s ? s : "");
    H5free_memory(s);
  }
  verify(set.get(), name, checksum(out), file);
  return out;
}

template <typename T>
std::vector<T> get_dataset(hid_t where, const std::string& name, hid_t mem_type, const std::string& file) {
  Handle set(H5Dopen2(where, name.c_str(), H5P_DEFAULT), H5Dclose, file + ": dataset " + name + " is missing");
  Handle space(H5Dget_space(set.get()), H5Sclose, file + ": dataspace of " + name);
  const auto n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) throw Error(file + ": cannot size dataset " + name);
  std::vector<T> out(static_cast<std::size_t>(n));
  if (n > 0)
    check(H5Dread(set.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), file + ": cannot read " + name);
  verify(set.get(), name, checksum(out.data(), out.size() * sizeof(T)), file);
  return out;
}

// A learner's state as its engine.get_state wrote it (python/runtime/state_codec.py): a safetensors header whose
// metadata holds the state's JSON. Anything else, a pickle above all, is refused here, before any learner sees it.
std::vector<std::uint8_t> learner_state(std::vector<std::uint8_t> bytes, const std::string& name,
                                        const std::string& file) {
  if (bytes.empty()) return bytes;  // a model that keeps no state
  std::uint64_t length = 0;
  bool ok = bytes.size() >= sizeof length;
  if (ok) std::memcpy(&length, bytes.data(), sizeof length);
  ok = ok && length <= bytes.size() - sizeof length;
  if (ok) {
    const auto header = nlohmann::json::parse(bytes.begin() + sizeof length,
                                              bytes.begin() + static_cast<std::ptrdiff_t>(sizeof length + length),
                                              nullptr, false);
    ok = header.is_object() && header.contains("__metadata__") && header["__metadata__"].is_object() &&
         header["__metadata__"].contains("fedavg_state");
  }
  if (!ok)
    throw Error(file + ": dataset " + name +
                " is not a learner state in this version's format (plain arrays and "
                "JSON; a pickle, as older versions wrote, is refused: nothing in a checkpoint is run)");
  return bytes;
}

// Throws naming the file and the parameter if `values` hold a NaN or an infinity.
void check_finite(const std::vector<float>& values, const std::string& name, const std::string& file) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw Error(file + ": parameter " + name + " holds " + (std::isnan(values[i]) ? "NaN" : "an infinity") +
                  " at value " + std::to_string(i) + ": the checkpoint's weights cannot be trained on");
}

}  // namespace

std::string hdf5_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

void write_checkpoint(const std::filesystem::path& path, const CheckpointContent& c, bool die_before_rename) {
  const auto& info = c.info;
  const std::string tmp = path.string() + ".tmp";
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors come back as codes and are reported here
  try {
    // A new file: whatever stood at NAME.h5.tmp (a leftover, a link) is removed first, never followed.
    if (::unlink(tmp.c_str()) != 0 && errno != ENOENT)
      throw Error(tmp + ": cannot remove the earlier file: " + std::strerror(errno));
    Handle file(H5Fcreate(tmp.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
                tmp + ": cannot create HDF5 file");
    for (const auto& a : c.arrays) {
      std::vector<hsize_t> dims(a.shape.begin(), a.shape.end());
      put_dataset(file.get(), a.name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, dims, a.data, tmp);
    }
    Handle group(H5Gcreate2(file.get(), "learner_state", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                 tmp + ": cannot create group learner_state");
    for (std::size_t i = 0; i < c.learner_states.size(); ++i)
      put_dataset(group.get(), std::to_string(i), H5T_STD_U8LE, H5T_NATIVE_UINT8, {c.learner_states[i].size()},
                  c.learner_states[i].data(), tmp);
    group.close(tmp + ": cannot close group learner_state");  // the file closes only once nothing in it is open
    put_dataset(file.get(), "read_positions", H5T_STD_I64LE, H5T_NATIVE_INT64, {c.positions.size(), 2},
                c.positions.data(), tmp);
    put_dataset(file.get(), "strategy_state", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {c.strategy_state.size()},
                c.strategy_state.data(), tmp);
    put_strings(file.get(), "vocabulary", c.vocabulary, tmp);
    put_strings(file.get(), "restarts", c.restarts, tmp);
    static_assert(sizeof(PipelineProgress) == 2 * sizeof(double), "PipelineProgress must pack to two doubles");
    put_dataset(file.get(), "pipeline_progress", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {c.progress.size(), 2},
                c.progress.data(), tmp);
    static_assert(sizeof(ShardProgress) == 5 * sizeof(std::int64_t), "ShardProgress must pack to five int64");
    if (!c.shards.empty())
      put_dataset(file.get(), "shards", H5T_STD_I64LE, H5T_NATIVE_INT64, {c.shards.size(), 5}, c.shards.data(), tmp);
    static_assert(sizeof(CorpusSummary) == 2 * sizeof(std::int64_t), "CorpusSummary must pack to two int64");
    if (!c.corpora.empty())
      put_dataset(file.get(), "corpora", H5T_STD_I64LE, H5T_NATIVE_INT64, {c.corpora.size(), 2}, c.corpora.data(), tmp);
    const hid_t root = file.get();
    put_attr(root, "round", H5T_NATIVE_INT64, info.round, tmp);
    put_attr(root, "test_loss", H5T_NATIVE_DOUBLE, info.test_loss, tmp);
    put_attr(root, "train_loss", H5T_NATIVE_DOUBLE, info.train_loss, tmp);
    put_attr(root, "first_loss", H5T_NATIVE_DOUBLE, info.first_loss, tmp);
    put_attr(root, "windows_per_learner", H5T_NATIVE_INT64, std::llround(info.windows_per_learner), tmp);
    put_attr(root, "seconds", H5T_NATIVE_DOUBLE, info.seconds, tmp);
    put_attr(root, "sync_bytes", H5T_NATIVE_INT64, std::llround(info.sync_bytes), tmp);
    put_attr(root, "seed", H5T_NATIVE_UINT64, info.seed, tmp);
    put_string_attr(root, "data_name", info.data_name, tmp);
    put_string_attr(root, "strategy", info.strategy, tmp);
    check(H5Fflush(root, H5F_SCOPE_GLOBAL), tmp + ": flush failed");
    file.close(tmp + ": cannot close the file");
  } catch (const Error&) {
    // A full disk, say: the half-written file goes, the checkpoint before stays.
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw;
  }
  if (die_before_rename) die_now();
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error(path.string() + ": cannot replace checkpoint: " + ec.message());
}

Checkpoint read_checkpoint(const std::filesystem::path& path,
                           const std::vector<std::pair<std::string, std::size_t>>& expected) {
  const std::string file = path.string();
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (!std::filesystem::exists(path)) throw Error(file + ": no checkpoint to resume from");
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, file + ": not a readable HDF5 checkpoint");
  Checkpoint c;
  const hid_t root = f.get();
  c.info.round = get_attr<std::int64_t>(root, "round", H5T_NATIVE_INT64, file);
  c.info.test_loss = get_attr<double>(root, "test_loss", H5T_NATIVE_DOUBLE, file);
  c.info.train_loss = get_attr<double>(root, "train_loss", H5T_NATIVE_DOUBLE, file);
  c.info.first_loss = get_attr<double>(root, "first_loss", H5T_NATIVE_DOUBLE, file);
  c.info.windows_per_learner = get_attr<double>(root, "windows_per_learner", H5T_NATIVE_DOUBLE, file);
  c.info.seconds = get_attr<double>(root, "seconds", H5T_NATIVE_DOUBLE, file);
  c.info.sync_bytes = get_attr<double>(root, "sync_bytes", H5T_NATIVE_DOUBLE, file);
  c.info.seed = get_attr<std::uint64_t>(root, "seed", H5T_NATIVE_UINT64, file);
  c.info.data_name = get_string_attr(root, "data_name", file);
  c.info.strategy = get_string_attr(root, "strategy", file);
  for (const auto& [name, size] : expected) {
    auto values = get_dataset<float>(root, name, H5T_NATIVE_FLOAT, file);
    if (values.size() != size)
      throw Error(file + ": parameter " + name + " holds " + std::to_string(values.size()) + " values, the model has " +
                  std::to_string(size) + " (was the checkpoint written with another vocabulary or model?)");
    check_finite(values, name, file);
    c.names.push_back(name);
    c.arrays.push_back(std::move(values));
  }
  Handle group(H5Gopen2(root, "learner_state", H5P_DEFAULT), H5Gclose, file + ": group learner_state is missing");
  H5G_info_t group_info{};
  check(H5Gget_info(group.get(), &group_info), file + ": cannot list learner_state");
  const hsize_t count = group_info.nlinks;
  for (hsize_t i = 0; i < count; ++i)
    c.learner_states.push_back(
        learner_state(get_dataset<std::uint8_t>(root, "learner_state/" + std::to_string(i), H5T_NATIVE_UINT8, file),
                      "learner_state/" + std::to_string(i), file));
  const auto flat = get_dataset<std::int64_t>(root, "read_positions", H5T_NATIVE_INT64, file);
  for (std::size_t i = 0; i + 1 < flat.size(); i += 2) c.positions.push_back({flat[i], flat[i + 1]});
  c.strategy_state = get_dataset<float>(root, "strategy_state", H5T_NATIVE_FLOAT, file);
  if (H5Lexists(root, "restarts", H5P_DEFAULT) > 0) c.restarts = get_strings(root, "restarts", file);
  if (H5Lexists(root, "shards", H5P_DEFAULT) > 0) {
    const auto shards = get_dataset<std::int64_t>(root, "shards", H5T_NATIVE_INT64, file);
    for (std::size_t i = 0; i + 4 < shards.size(); i += 5)
      c.shards.push_back({shards[i], shards[i + 1], shards[i + 2], shards[i + 3], shards[i + 4]});
  }
  if (H5Lexists(root, "corpora", H5P_DEFAULT) > 0) {
    const auto corpora = get_dataset<std::int64_t>(root, "corpora", H5T_NATIVE_INT64, file);
    for (std::size_t i = 0; i + 1 < corpora.size(); i += 2) c.corpora.push_back({corpora[i], corpora[i + 1]});
  }
  if (H5Lexists(root, "pipeline_progress", H5P_DEFAULT) > 0) {
    const auto progress = get_dataset<double>(root, "pipeline_progress", H5T_NATIVE_DOUBLE, file);
    for (std::size_t i = 0; i + 1 < progress.size(); i += 2) c.progress.push_back({progress[i], progress[i + 1]});
  }
  return c;
}

double epochs_trained(const std::vector<PipelineProgress>& progress, bool sharded) {
  if (progress.empty()) return std::nan("");
  if (sharded) {
    double trained = 0.0;
    for (const auto& p : progress) trained += p.trained;
    return progress[0].pass_windows > 0 ? trained / progress[0].pass_windows : std::nan("");
  }
  double least = std::numeric_limits<double>::infinity();
  for (const auto& p : progress) {
    if (!(p.pass_windows > 0)) return std::nan("");
    least = std::min(least, p.trained / p.pass_windows);
  }
  return least;
}

CheckpointWords read_checkpoint_words(const std::filesystem::path& path, const std::vector<std::string>& names) {
  const std::string file = path.string();
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(file + ": is a directory, not a checkpoint (NAME.h5)");
  if (!std::filesystem::exists(path, ec)) throw InputError(file + ": no such file");
  if (H5Fis_hdf5(file.c_str()) <= 0) throw InputError(file + ": not an HDF5 checkpoint (NAME.h5 of an earlier run)");
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, file + ": not a readable HDF5 checkpoint");
  if (H5Lexists(f.get(), "vocabulary", H5P_DEFAULT) <= 0)
    throw InputError(file + ": holds no vocabulary, so its rows cannot be matched to words");
  CheckpointWords c;
  c.vocabulary = get_strings(f.get(), "vocabulary", file);
  for (const auto& name : names) {
    if (H5Lexists(f.get(), name.c_str(), H5P_DEFAULT) <= 0) continue;
    auto values = get_dataset<float>(f.get(), name, H5T_NATIVE_FLOAT, file);
    check_finite(values, name, file);
    c.arrays.emplace(name, std::move(values));
  }
  return c;
}

}  // namespace fedavg::core
