// A change to some rows of the flat weights, as the sparse exchange moves it: per table (a parameter seen as
// rows of its first dimension; a 1-D parameter is one row) the sorted indices of the rows it changes, their
// values and, for the "touched" weighting, each row's weight. Encoded to bytes with float32, float16, bfloat16 or
// int8 values; merged by adding; applied by adding to the weights. Every operation reuses the vectors' capacity, so
// a delta kept from round to round allocates nothing once it has seen its largest round.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bridge/library.hpp"
#include "core/workers.hpp"
#include "training/exchange/combine_rule.hpp"

namespace fedavg::training {

// Int8: each row is a float32 scale, a power of two, then one signed byte per value (value = byte x scale, the
// scale the least power of two, from 2^-126 up, that keeps the row's largest magnitude within 127 steps).
enum class ValueType { Float32, Float16, BFloat16, Int8 };

// Rows of a table below which a loop over rows is not worth sharing between threads (a piece per thread has at
// least this many).
constexpr std::size_t kRowGrain = 1024;

// Rounds the n values of one row to `type` and back, in place (what the other side decodes). Rounding a rounded
// row again changes nothing.
void round_values(float* v, std::size_t n, ValueType type);
// The bytes one row of `cols` values takes as `type`.
std::size_t row_bytes(ValueType type, std::size_t cols);

// Where each table lies in the flat weights.
struct Table {
  std::size_t offset;  // first float
  std::size_t rows;
  std::size_t cols;
};
using Layout = std::vector<Table>;
// The layout of a model's parameters, in flat-buffer order.
Layout layout_of(const std::vector<bridge::ParamShape>& shapes);
// The floats of the flat weights that `layout` lays out.
std::size_t params_of(const Layout& layout);
// Throws core::Error unless `rows` (engine.written_rows of parameter `param`, ascending) all lie in table `t`.
void check_written_rows(const std::vector<std::uint32_t>& rows, std::size_t param, const Table& t);

struct SparseDelta {
  struct Part {
    std::vector<std::uint32_t> rows;  // sorted
    std::vector<float> values;        // rows.size() x cols
    std::vector<float> weights;       // one per row, or empty (no per-row weighting)
  };
  std::vector<Part> parts;  // one per table

  explicit SparseDelta(std::size_t tables = 0) : parts(tables) {}
  std::size_t rows() const;
  // No rows (the capacity stays).
  void clear();
  // Adds `o` in: rows of both are summed, values and weights alike. `o` must be another delta.
  void add(const SparseDelta& o, const Layout& layout);
  // Adds in the delta encoded in bytes [skip, end) (rows summed, values and weights alike) in one pass over its
  // values, building the sum in `spare`, which is then swapped in (so `spare`'s capacity is reused from call to
  // call). Throws comm::Error on a payload that does not fit `layout` (the tables before the fault are merged).
  // `workers` share the rows; the result is the same bits as decoding and adding.
  void merge_encoded(const std::vector<std::uint8_t>& bytes, const Layout& layout, ValueType type, std::size_t skip,
                     SparseDelta& spare, core::Workers* workers = nullptr);
  // Multiplies every row by `rule`'s factor for its weight W (the windows share of the learners that sent it) of
  // `learners` (CombineRule::row_factor: 1 / W, times (learners * W)^power where the rule adds), and drops the
  // weights. `workers` share the rows.
  void normalise(const Layout& layout, const CombineRule& rule, int learners, core::Workers* workers = nullptr);
  // w[row] += values, for every row.
  void apply_to(float* w, const Layout& layout) const;
  // Encodes into `out`, resized to fit, after `front` bytes left untouched for the caller's header. `workers`:
  // threads that share the conversion of the values (none: the caller alone); the bytes are the same.
  void encode(std::vector<std::uint8_t>& out, const Layout& layout, ValueType type, std::size_t front = 0,
              core::Workers* workers = nullptr) const;
  // Adds the delta encoded in bytes [skip, end) to `w`, and to `also` unless null, without decoding it into a
  // delta first (one pass over its values). Throws as merge_encoded does; its weights, if any, are not used.
  // `workers` share the rows (their rows are distinct, so the sums are the same bits).
  static void add_encoded(const std::vector<std::uint8_t>& bytes, const Layout& layout, ValueType type,
                          std::size_t skip, float* w, float* also = nullptr, core::Workers* workers = nullptr);
};

}  // namespace fedavg::training
