#include "core/checkpoint.hpp"

#include <hdf5.h>

#include <utility>

#include "core/error.hpp"

namespace fedavg::core {
namespace {

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what) : id_(id), close_(close) {
    if (id_ < 0) throw Error(what);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

void check(herr_t rc, const std::string& what) {
  if (rc < 0) throw Error(what);
}

template <typename T>
void attribute(hid_t target, const char* name, hid_t type, const T& value, const std::string& file) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, file + ": HDF5 dataspace");
  Handle attr(H5Acreate2(target, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
              file + ": cannot create attribute " + name);
  check(H5Awrite(attr.get(), type, &value), file + ": cannot write attribute " + name);
}

void string_attribute(hid_t target, const char* name, const std::string& value, const std::string& file) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, file + ": HDF5 string type");
  check(H5Tset_size(type.get(), value.empty() ? 1 : value.size()), file + ": HDF5 string size");
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, file + ": HDF5 dataspace");
  Handle attr(H5Acreate2(target, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
              file + ": cannot create attribute " + name);
  check(H5Awrite(attr.get(), type.get(), value.empty() ? "" : value.c_str()), file + ": cannot write attribute " + name);
}

}  // namespace

void write_checkpoint(const std::filesystem::path& path, const std::vector<NamedArray>& arrays,
                      const CheckpointInfo& info) {
  const std::string tmp = path.string() + ".tmp";
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors come back as codes and are reported here
  {
    Handle file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
                tmp + ": cannot create HDF5 file");
    for (const auto& a : arrays) {
      std::vector<hsize_t> dims(a.shape.begin(), a.shape.end());
      Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
                   tmp + ": HDF5 dataspace for " + a.name);
      Handle set(H5Dcreate2(file.get(), a.name.c_str(), H5T_IEEE_F32LE, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT),
                 H5Dclose, tmp + ": cannot create dataset " + a.name);
      check(H5Dwrite(set.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.data),
            tmp + ": cannot write dataset " + a.name);
    }
    const hid_t root = file.get();
    attribute(root, "round", H5T_NATIVE_INT64, info.round, tmp);
    attribute(root, "test_loss", H5T_NATIVE_DOUBLE, info.test_loss, tmp);
    attribute(root, "windows_per_learner", H5T_NATIVE_DOUBLE, info.windows_per_learner, tmp);
    attribute(root, "seed", H5T_NATIVE_UINT64, info.seed, tmp);
    string_attribute(root, "data_name", info.data_name, tmp);
    check(H5Fflush(root, H5F_SCOPE_GLOBAL), tmp + ": flush failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error(path.string() + ": cannot replace checkpoint: " + ec.message());
}

}  // namespace fedavg::core
