#include "core/checkpoint.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
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

// `v` as %g would print it, with "NaN" and "inf" spelled out.
std::string format_number(double v) {
  if (std::isnan(v)) return "NaN";
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
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
// The most rounds a checkpoint may record (2^40): more is a damaged or forged counter.
constexpr std::int64_t kMaxRound = std::int64_t{1} << 40;
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

// The bytes of a root attribute as its record holds them: its type class, then its value (a number's bytes in
// native order, a string's text). A class the writer never writes gives the class alone.
std::string attribute_bytes(hid_t root, const char* name, const std::string& file) {
  Handle attr(H5Aopen(root, name, H5P_DEFAULT), H5Aclose, file + ": attribute " + name + " is unreadable");
  Handle type(H5Aget_type(attr.get()), H5Tclose, file + ": type of attribute " + name);
  const H5T_class_t kind = H5Tget_class(type.get());
  std::string out(1, static_cast<char>(kind));
  if (kind == H5T_STRING) return out + get_string_attr(root, name, file);
  if (kind != H5T_INTEGER && kind != H5T_FLOAT) return out;
  Handle space(H5Aget_space(attr.get()), H5Sclose, file + ": dataspace of attribute " + name);
  Handle mem(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), H5Tclose, file + ": type of attribute " + name);
  const auto n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0 || n > 1024) return out;
  std::string bytes(H5Tget_size(mem.get()) * static_cast<std::size_t>(n), '\0');
  check(H5Aread(attr.get(), mem.get(), bytes.data()), file + ": cannot read attribute " + name);
  return out + bytes;
}

// A dataset's record: its shape and checksum (0 if it carries none), each as 8 native bytes; a group's or another
// link's, its kind.
std::string object_bytes(hid_t group, const char* name, H5L_type_t link) {
  if (link != H5L_TYPE_HARD) return "l";
  const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
  if (object < 0) return "?";
  Handle owner(object, H5Oclose, "");
  if (H5Iget_type(object) != H5I_DATASET) return "g";
  std::string out = "d";
  const hid_t space = H5Dget_space(object);
  if (space >= 0) {
    Handle owned(space, H5Sclose, "");
    hsize_t dims[H5S_MAX_RANK] = {};
    const int rank = H5Sget_simple_extent_dims(space, dims, nullptr);
    for (int i = 0; i < rank; ++i) out.append(reinterpret_cast<const char*>(&dims[i]), sizeof dims[i]);
  }
  std::uint64_t sum = 0;
  if (H5Aexists(object, kChecksum) > 0) {
    const hid_t attr = H5Aopen(object, kChecksum, H5P_DEFAULT);
    if (attr >= 0) {
      Handle owned(attr, H5Aclose, "");
      if (H5Aread(attr, H5T_NATIVE_UINT64, &sum) < 0) sum = 0;
    }
  }
  return out + std::string(reinterpret_cast<const char*>(&sum), sizeof sum);
}

// The checksum of the file's attributes and structure, which the root's attribute "xxh3" holds: XXH3 (as
// checksum(texts)) of the sorted records "@NAME\0" + attribute_bytes for each root attribute but "xxh3", and
// "/PATH\0" + object_bytes for every link in the file. So an edited attribute, or a dataset added, removed,
// reshaped or taken from another checkpoint, no longer matches it.
std::uint64_t structure_checksum(hid_t root, const std::string& file) {
  struct Walk {
    const std::string* file;
    std::vector<std::string> records;
    std::string error;
  } walk{&file, {}, {}};
  hsize_t at = 0;
  const herr_t listed = H5Aiterate2(
      root, H5_INDEX_NAME, H5_ITER_INC, &at,
      [](hid_t loc, const char* name, const H5A_info_t*, void* data) -> herr_t {
        auto& w = *static_cast<Walk*>(data);
        if (std::strcmp(name, kChecksum) == 0) return 0;
        try {
          w.records.push_back("@" + std::string(name) + '\0' + attribute_bytes(loc, name, *w.file));
        } catch (const Error& e) {
          w.error = e.what();
          return -1;
        }
        return 0;
      },
      &walk);
  if (!walk.error.empty()) throw Error(walk.error);
  check(listed, file + ": cannot list the attributes");
  check(H5Lvisit(
            root, H5_INDEX_NAME, H5_ITER_INC,
            [](hid_t group, const char* name, const H5L_info_t* info, void* data) -> herr_t {
              static_cast<Walk*>(data)->records.push_back("/" + std::string(name) + '\0' +
                                                          object_bytes(group, name, info->type));
              return 0;
            },
            &walk),
        file + ": cannot list the datasets");
  std::sort(walk.records.begin(), walk.records.end());
  return checksum(walk.records);
}

// Throws naming the file unless its root carries the checksum of its attributes and structure, and it matches.
void verify_structure(hid_t root, const std::string& file) {
  if (H5Aexists(root, kChecksum) <= 0)
    throw InputError(file + ": attribute " + kChecksum +
                     " of the file (the checksum of its attributes and structure) is missing: a checkpoint of an older "
                     "version, whose counters cannot be checked, so it is refused");
  if (get_attr<std::uint64_t>(root, kChecksum, H5T_NATIVE_UINT64, file) != structure_checksum(root, file))
    throw InputError(file +
                     ": its attributes or the set of its datasets were edited: they do not match the file's "
                     "checksum (attribute " +
                     std::string(kChecksum) + ")");
}

// Throws naming the file and the parameter if `values` hold a NaN or an infinity.
void check_finite(const std::vector<float>& values, const std::string& name, const std::string& file) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw Error(file + ": parameter " + name + " holds " + (std::isnan(values[i]) ? "NaN" : "an infinity") +
                  " at value " + std::to_string(i) + ": the checkpoint's weights cannot be trained on");
}

// The run counters the root's attributes hold.
CheckpointInfo read_info(hid_t root, const std::string& file) {
  CheckpointInfo i;
  i.round = get_attr<std::int64_t>(root, "round", H5T_NATIVE_INT64, file);
  i.test_loss = get_attr<double>(root, "test_loss", H5T_NATIVE_DOUBLE, file);
  i.train_loss = get_attr<double>(root, "train_loss", H5T_NATIVE_DOUBLE, file);
  i.first_loss = get_attr<double>(root, "first_loss", H5T_NATIVE_DOUBLE, file);
  i.windows_per_learner = get_attr<double>(root, "windows_per_learner", H5T_NATIVE_DOUBLE, file);
  i.seconds = get_attr<double>(root, "seconds", H5T_NATIVE_DOUBLE, file);
  i.sync_bytes = get_attr<double>(root, "sync_bytes", H5T_NATIVE_DOUBLE, file);
  i.seed = get_attr<std::uint64_t>(root, "seed", H5T_NATIVE_UINT64, file);
  i.data_name = get_string_attr(root, "data_name", file);
  i.strategy = get_string_attr(root, "strategy", file);
  return i;
}

// The learners' states, each empty (no state kept or collected) or in this version's format.
std::vector<std::vector<std::uint8_t>> read_learner_states(hid_t root, const std::string& file) {
  Handle group(H5Gopen2(root, "learner_state", H5P_DEFAULT), H5Gclose, file + ": group learner_state is missing");
  H5G_info_t group_info{};
  check(H5Gget_info(group.get(), &group_info), file + ": cannot list learner_state");
  std::vector<std::vector<std::uint8_t>> states;
  for (hsize_t i = 0; i < group_info.nlinks; ++i) {
    const std::string name = "learner_state/" + std::to_string(i);
    states.push_back(learner_state(get_dataset<std::uint8_t>(root, name, H5T_NATIVE_UINT8, file), name, file));
  }
  return states;
}

// Throws naming the file and the field unless `ok`: `field` holds `value`, which is outside `range`.
void in_range(bool ok, const std::string& field, double value, const char* range, const std::string& file) {
  if (!ok)
    throw InputError(file + ": " + field + " is " + format_number(value) + ", outside its range (" + range + ")");
}

// Throws naming the file and the field unless every counter of `c` is in its range.
void check_ranges(const Checkpoint& c, const std::string& file) {
  const auto& i = c.info;
  const auto at_least_0 = [](double v) { return std::isfinite(v) && v >= 0; };
  in_range(i.round >= 0 && i.round <= kMaxRound, "attribute round", static_cast<double>(i.round), "0 to 2^40", file);
  in_range(at_least_0(i.test_loss), "attribute test_loss", i.test_loss, "finite, 0 or more", file);
  in_range(std::isnan(i.train_loss) || at_least_0(i.train_loss), "attribute train_loss", i.train_loss,
           "NaN (no window trained yet), or finite, 0 or more", file);
  in_range(at_least_0(i.first_loss), "attribute first_loss", i.first_loss, "finite, 0 or more", file);
  in_range(at_least_0(i.windows_per_learner), "attribute windows_per_learner", i.windows_per_learner, "0 or more",
           file);
  in_range(at_least_0(i.seconds), "attribute seconds", i.seconds, "finite, 0 or more", file);
  in_range(at_least_0(i.sync_bytes), "attribute sync_bytes", i.sync_bytes, "0 or more", file);
  for (std::size_t p = 0; p < c.positions.size(); ++p) {
    const std::string row = "dataset read_positions row " + std::to_string(p);
    in_range(c.positions[p].offset >= 0, row + " offset", static_cast<double>(c.positions[p].offset), "0 or more",
             file);
    in_range(c.positions[p].passes >= 0, row + " passes", static_cast<double>(c.positions[p].passes), "0 or more",
             file);
  }
  for (std::size_t p = 0; p < c.progress.size(); ++p) {
    const std::string row = "dataset pipeline_progress row " + std::to_string(p);
    in_range(at_least_0(c.progress[p].trained), row + " trained", c.progress[p].trained, "finite, 0 or more", file);
    in_range(at_least_0(c.progress[p].pass_windows), row + " pass_windows", c.progress[p].pass_windows,
             "finite, 0 or more", file);
  }
  for (std::size_t s = 0; s < c.shards.size(); ++s) {
    const auto& h = c.shards[s];
    const std::string row = "dataset shards row " + std::to_string(s);
    in_range(h.file >= 0 && (c.corpora.empty() || h.file < static_cast<std::int64_t>(c.corpora.size())), row + " file",
             static_cast<double>(h.file), "a corpus file's index", file);
    in_range(h.begin >= 0 && h.begin <= h.end, row + " begin", static_cast<double>(h.begin), "0 to its end", file);
    in_range(h.finished >= 0, row + " finished", static_cast<double>(h.finished), "0 or more", file);
    in_range(h.windows >= -1, row + " windows", static_cast<double>(h.windows), "-1 or more", file);
  }
  for (std::size_t k = 0; k < c.strategy_state.size(); ++k)
    in_range(std::isfinite(c.strategy_state[k]), "dataset strategy_state value " + std::to_string(k),
             c.strategy_state[k], "finite", file);
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
    put_attr(root, kChecksum, H5T_NATIVE_UINT64, structure_checksum(root, tmp), tmp);
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
  c.info = read_info(root, file);
  for (const auto& [name, size] : expected) {
    auto values = get_dataset<float>(root, name, H5T_NATIVE_FLOAT, file);
    if (values.size() != size)
      throw Error(file + ": parameter " + name + " holds " + std::to_string(values.size()) + " values, the model has " +
                  std::to_string(size) + " (was the checkpoint written with another vocabulary or model?)");
    check_finite(values, name, file);
    c.names.push_back(name);
    c.arrays.push_back(std::move(values));
  }
  c.learner_states = read_learner_states(root, file);
  const auto flat = get_dataset<std::int64_t>(root, "read_positions", H5T_NATIVE_INT64, file);
  for (std::size_t i = 0; i + 1 < flat.size(); i += 2) c.positions.push_back({flat[i], flat[i + 1]});
  c.strategy_state = get_dataset<float>(root, "strategy_state", H5T_NATIVE_FLOAT, file);
  c.vocabulary = get_strings(root, "vocabulary", file);
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
  verify_structure(root, file);  // after the datasets, whose own checksums name the one that is damaged
  check_ranges(c, file);
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

std::uint64_t checkpoint_structure_checksum(const std::filesystem::path& path) {
  const std::string file = path.string();
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, file + ": not a readable HDF5 checkpoint");
  return structure_checksum(f.get(), file);
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
