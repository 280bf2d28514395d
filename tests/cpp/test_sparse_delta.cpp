// The sparse exchange's pieces that need no MPI: 16-bit conversions, int8 rows, and SparseDelta's merge,
// weighting, encoding and checks of what it decodes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>

#include "comm/error.hpp"
#include "comm/float16.hpp"
#include "core/workers.hpp"
#include "sparse_reference.hpp"
#include "training/exchange/sparse_delta.hpp"

using namespace fedavg;
using training::Layout;
using training::SparseDelta;
using training::ValueType;

namespace {

// Two tables: 5 rows of 3, then 4 rows of 2 (offset 15).
const Layout kLayout{{0, 5, 3}, {15, 4, 2}};

SparseDelta delta(std::vector<std::uint32_t> rows0, float v0, std::vector<std::uint32_t> rows1, float v1) {
  SparseDelta d(2);
  d.parts[0].rows = rows0;
  for (std::size_t k = 0; k < rows0.size(); ++k)
    for (int c = 0; c < 3; ++c) d.parts[0].values.push_back(v0 + static_cast<float>(k) + 0.25f * static_cast<float>(c));
  d.parts[1].rows = rows1;
  for (std::size_t k = 0; k < rows1.size(); ++k)
    for (int c = 0; c < 2; ++c) d.parts[1].values.push_back(v1 - static_cast<float>(k) - 0.5f * static_cast<float>(c));
  return d;
}

}  // namespace

TEST(Float16, ExactValuesRoundTripAndOthersRoundToNearest) {
  for (float f : {0.0f, 1.0f, -2.0f, 0.5f, 65504.0f, -0.000061035156f, 1024.0f})
    EXPECT_EQ(comm::from_float16(comm::to_float16(f)), f) << f;
  EXPECT_TRUE(std::signbit(comm::from_float16(comm::to_float16(-0.0f))));
  // 11 significant bits: relative error at most 2^-11.
  for (float f : {0.1f, -3.14159f, 1e-3f, 123.456f})
    EXPECT_NEAR(comm::from_float16(comm::to_float16(f)), f, std::fabs(f) / 2048);
  // Ties go to even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
  EXPECT_EQ(comm::from_float16(comm::to_float16(1.0f + 1.0f / 2048)), 1.0f);
  EXPECT_TRUE(std::isinf(comm::from_float16(comm::to_float16(1e6f))));
  EXPECT_TRUE(std::isnan(comm::from_float16(comm::to_float16(std::numeric_limits<float>::quiet_NaN()))));
  // Subnormals keep their value to the nearest 2^-24.
  EXPECT_NEAR(comm::from_float16(comm::to_float16(3e-7f)), 3e-7f, 6e-8f);
}

TEST(Float16, ArraysConvertExactlyAsSingleValues) {
  // Normals, subnormals, ties, the overflow edge, infinities and zeros; 37 values: vector body and tail.
  std::vector<float> in;
  for (float f :
       {0.0f, -0.0f, 1.0f, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 65504.0f, 65519.0f, 65520.0f, 1e6f, -1e6f, 3e-7f,
        6e-8f, 2.9e-8f, 1e-10f, 0.1f, -3.14159f, 123.456f, 5.96046448e-8f, std::numeric_limits<float>::infinity()})
    in.insert(in.end(), {f, -f});
  in.pop_back();
  std::vector<std::uint16_t> half(in.size());
  comm::to_float16(in.data(), half.data(), in.size());
  std::vector<float> back(in.size()), rounded = in;
  comm::from_float16(half.data(), back.data(), half.size());
  comm::round_to_float16(rounded.data(), rounded.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(half[i], comm::to_float16(in[i])) << in[i];
    EXPECT_EQ(back[i], comm::from_float16(comm::to_float16(in[i]))) << in[i];
    EXPECT_EQ(rounded[i], back[i]) << in[i];
  }
}

TEST(BFloat16, KeepsFloat32RangeWithEightSignificantBits) {
  for (float f : {0.0f, 1.0f, -2.0f, 1e30f})
    EXPECT_NEAR(comm::from_bfloat16(comm::to_bfloat16(f)), f, std::fabs(f) / 256);
  EXPECT_FALSE(std::isinf(comm::from_bfloat16(comm::to_bfloat16(1e30f))));
  EXPECT_EQ(comm::from_bfloat16(comm::to_bfloat16(1.0f + 1.0f / 256)), 1.0f);  // tie to even
  EXPECT_TRUE(std::isnan(comm::from_bfloat16(comm::to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(SparseDelta, LayoutSeesTablesAsRowsOfTheirFirstDimension) {
  const Layout l = training::layout_of({{"emb", {5, 3}}, {"bias", {4}}, {"w", {2, 2, 2}}});
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0].offset, 0u);
  EXPECT_EQ(l[0].rows, 5u);
  EXPECT_EQ(l[1].offset, 15u);
  EXPECT_EQ(l[1].rows, 1u);  // a 1-D parameter is one row
  EXPECT_EQ(l[1].cols, 4u);
  EXPECT_EQ(l[2].offset, 19u);
  EXPECT_EQ(l[2].rows, 2u);
  EXPECT_EQ(l[2].cols, 4u);
}

TEST(SparseDelta, AddingSumsSharedRowsAndKeepsTheRestSorted) {
  SparseDelta a = delta({0, 3}, 1.0f, {2}, 5.0f);
  const SparseDelta b = delta({1, 3}, 10.0f, {}, 0.0f);
  a.add(b, kLayout);
  EXPECT_EQ(a.parts[0].rows, (std::vector<std::uint32_t>{0, 1, 3}));
  EXPECT_EQ(a.parts[0].values[3], 10.0f);         // row 1 from b
  EXPECT_EQ(a.parts[0].values[6], 2.0f + 11.0f);  // row 3: a's second row plus b's second row
  EXPECT_EQ(a.parts[0].values[8], 2.5f + 11.5f);
  EXPECT_EQ(a.parts[1].rows, (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(a.rows(), 4u);
}

TEST(SparseDelta, AddingAgreesWithARowByRowSumForAnyOverlap) {
  // Random row sets (either side empty, disjoint, nested, interleaved), weights on one side, both or neither, the
  // same delta reused after clear(): the in-place merge equals summing into a map.
  std::mt19937 rng(7);
  SparseDelta a(2);
  for (int trial = 0; trial < 200; ++trial) {
    a.clear();
    SparseDelta b(2);
    std::map<std::uint32_t, std::pair<std::vector<float>, float>> want;
    const bool wa = trial % 3 == 0, wb = trial % 4 == 0;
    for (SparseDelta* d : {&a, &b}) {
      for (std::uint32_t r = 0; r < 5; ++r) {
        if (rng() % 2) continue;
        const float v = static_cast<float>(rng() % 100);
        const float wt = static_cast<float>(rng() % 7);
        const bool weighted = d == &a ? wa : wb;
        d->parts[0].rows.push_back(r);
        d->parts[0].values.insert(d->parts[0].values.end(), {v, v + 1, v + 2});
        if (weighted) d->parts[0].weights.push_back(wt);
        auto& [sum, weight] = want[r];
        sum.resize(3, 0.0f);
        for (int c = 0; c < 3; ++c) sum[static_cast<std::size_t>(c)] += v + static_cast<float>(c);
        weight += weighted ? wt : 0.0f;
      }
    }
    const bool weighted = (wa && !a.parts[0].rows.empty()) || (wb && !b.parts[0].rows.empty());
    a.add(b, kLayout);
    std::vector<std::uint32_t> rows;
    std::vector<float> values, weights;
    for (const auto& [r, sw] : want) {
      rows.push_back(r);
      values.insert(values.end(), sw.first.begin(), sw.first.end());
      weights.push_back(sw.second);
    }
    ASSERT_EQ(a.parts[0].rows, rows) << trial;
    ASSERT_EQ(a.parts[0].values, values) << trial;
    if (weighted) {
      ASSERT_EQ(a.parts[0].weights, weights) << trial;
    } else {
      ASSERT_TRUE(a.parts[0].weights.empty()) << trial;
    }
  }
}

TEST(SparseDelta, MergingAnEncodedDeltaGivesTheBitsOfDecodingAndAdding) {
  // Random rows of a large table (more than one piece per thread) and a small one, weights on either side or
  // neither, every value type, 1 and 4 threads; the target and the spare are reused from trial to trial.
  const Layout layout{{0, 9000, 5}, {45000, 3, 2}};
  std::mt19937 rng(11);
  core::Workers four(4);
  SparseDelta a(2), spare(2);
  const auto random = [&](bool weighted) {
    SparseDelta d(2);
    for (std::size_t t = 0; t < 2; ++t) {
      const std::uint32_t skip = 1 + static_cast<std::uint32_t>(rng() % 4);  // about every skip-th row
      for (std::uint32_t r = 0; r < layout[t].rows; ++r) {
        if (rng() % skip) continue;
        d.parts[t].rows.push_back(r);
        for (std::size_t c = 0; c < layout[t].cols; ++c)
          d.parts[t].values.push_back(static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 37.0f);
        if (weighted) d.parts[t].weights.push_back(static_cast<float>(rng() % 9) / 4.0f);
      }
    }
    return d;
  };
  const ValueType types[] = {ValueType::Float32, ValueType::Float16, ValueType::BFloat16, ValueType::Int8};
  for (int trial = 0; trial < 32; ++trial) {
    const ValueType type = types[(trial / 4) % 4];  // each with the four pairs of weighted sides
    a = random(trial % 2 == 0);
    SparseDelta b = random(trial % 4 < 2);
    if (trial == 5) b.parts[0] = SparseDelta::Part{};  // nothing in one table
    const auto bytes = sparse_reference::encode(b, layout, type, 8);
    SparseDelta want = a;
    want.add(sparse_reference::decode(bytes, layout, type, 8), layout);
    a.merge_encoded(bytes, layout, type, 8, spare, trial % 2 ? &four : nullptr);
    for (std::size_t t = 0; t < 2; ++t) {
      ASSERT_EQ(a.parts[t].rows, want.parts[t].rows) << trial;
      ASSERT_EQ(a.parts[t].values, want.parts[t].values) << trial;
      ASSERT_EQ(a.parts[t].weights, want.parts[t].weights) << trial;
    }
  }
  auto bytes = sparse_reference::encode(a, layout, ValueType::Float16);
  bytes.pop_back();
  EXPECT_THROW(a.merge_encoded(bytes, layout, ValueType::Float16, 0, spare), comm::Error);
}

TEST(SparseDelta, WeightedRowsAreAveragedOverTheirOwnWeights) {
  SparseDelta a = delta({0, 1}, 1.0f, {}, 0.0f);  // rows 0 and 1
  a.parts[0].weights = {0.25f, 0.25f};
  SparseDelta b = delta({1}, 3.0f, {}, 0.0f);  // row 1 only
  b.parts[0].weights = {0.75f};
  a.add(b, kLayout);
  a.normalise(kLayout, fedavg::training::CombineRule::average(true), 2);
  EXPECT_TRUE(a.parts[0].weights.empty());
  EXPECT_FLOAT_EQ(a.parts[0].values[0], 1.0f / 0.25f);          // row 0: one learner's value over its weight
  EXPECT_FLOAT_EQ(a.parts[0].values[3], (2.0f + 3.0f) / 1.0f);  // row 1: sum over the sum of weights
}

TEST(SparseDelta, ApplyAddsOnlyTheRowsItHolds) {
  std::vector<float> w(23, 1.0f);
  delta({4}, 2.0f, {0}, -1.0f).apply_to(w.data(), kLayout);
  EXPECT_EQ(w[12], 3.0f);  // table 0 row 4, column 0
  EXPECT_EQ(w[14], 3.5f);
  EXPECT_EQ(w[15], 0.0f);  // table 1 row 0
  EXPECT_EQ(w[16], -0.5f);
  EXPECT_EQ(w[0], 1.0f);  // untouched rows keep their value
  EXPECT_EQ(w[17], 1.0f);
}

TEST(SparseDelta, EncodingRoundTripsExactlyInFloat32AndAsRoundedIn16Bits) {
  SparseDelta d = delta({1, 2, 4}, 0.1f, {3}, -7.3f);
  d.parts[0].weights = {1.0f, 2.0f, 3.0f};
  const SparseDelta back = sparse_reference::decode(sparse_reference::encode(d, kLayout, ValueType::Float32), kLayout,
                                                    ValueType::Float32);
  EXPECT_EQ(back.parts[0].rows, d.parts[0].rows);
  EXPECT_EQ(back.parts[0].values, d.parts[0].values);
  EXPECT_EQ(back.parts[0].weights, d.parts[0].weights);
  EXPECT_EQ(back.parts[1].values, d.parts[1].values);
  EXPECT_EQ(back.parts[1].weights, (std::vector<float>{0.0f}));  // a table without weights gets zeros

  for (ValueType t : {ValueType::Float16, ValueType::BFloat16}) {
    const auto bytes = sparse_reference::encode(d, kLayout, t);
    EXPECT_LT(bytes.size(), sparse_reference::encode(d, kLayout, ValueType::Float32).size());
    EXPECT_EQ(sparse_reference::decode(bytes, kLayout, t).parts[0].values,
              sparse_reference::rounded(d, t).parts[0].values);
  }
}

TEST(SparseDelta, Int8RowsTakeAQuarterOfTheBytesAndDecodeAsRoundedWithinHalfAStep) {
  // A table of 4 rows of 300: mixed magnitudes, a row of zeros, a row of one tiny value, and a row of 127 steps.
  const Layout layout{{0, 4, 300}};
  SparseDelta d(1);
  d.parts[0].rows = {0, 1, 2, 3};
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 0.01f);
  for (int c = 0; c < 300; ++c) d.parts[0].values.push_back(normal(rng));
  d.parts[0].values.resize(600, 0.0f);
  for (int c = 0; c < 300; ++c) d.parts[0].values.push_back(c == 7 ? 1e-30f : 0.0f);
  for (int c = 0; c < 300; ++c) d.parts[0].values.push_back(static_cast<float>(c % 255 - 127) * 0.5f);
  const auto bytes = sparse_reference::encode(d, layout, ValueType::Int8);
  EXPECT_EQ(bytes.size(), 4 + 4 + 4 * (4 + 4 + 300));  // flags, count, then per row its index, scale and bytes
  const SparseDelta back = sparse_reference::decode(bytes, layout, ValueType::Int8);
  EXPECT_EQ(back.parts[0].values, sparse_reference::rounded(d, ValueType::Int8).parts[0].values);
  // Rounding a rounded row again changes no bit, so a replica that adds its own rounding adds what others decode.
  EXPECT_EQ(sparse_reference::rounded(back, ValueType::Int8).parts[0].values, back.parts[0].values);
  for (std::size_t r = 0; r < 4; ++r) {
    const float* v = d.parts[0].values.data() + r * 300;
    float most = 0.0f;
    for (int c = 0; c < 300; ++c) most = std::max(most, std::fabs(v[c]));
    for (int c = 0; c < 300; ++c) {
      const float got = back.parts[0].values[r * 300 + static_cast<std::size_t>(c)];
      EXPECT_LE(std::fabs(got - v[c]), most / 127.0f) << r << " " << c;  // half a step, a step at most 2 most/127
      if (v[c] == 0.0f) {
        EXPECT_EQ(got, 0.0f);
      }
    }
  }
  EXPECT_EQ(back.parts[0].values[3 * 300 + 1], d.parts[0].values[3 * 300 + 1]);  // whole steps are exact
  EXPECT_GT(back.parts[0].values[2 * 300 + 7], 0.0f);                            // a tiny row keeps its sign
}

TEST(SparseDelta, AnInt8RowThatIsNotFiniteStaysNotFinite) {
  const Layout layout{{0, 1, 3}};
  SparseDelta d(1);
  d.parts[0].rows = {0};
  d.parts[0].values = {1.0f, std::numeric_limits<float>::infinity(), 2.0f};
  const SparseDelta back = sparse_reference::decode(sparse_reference::encode(d, layout, ValueType::Int8), layout,
                                                    ValueType::Int8);
  for (const float v : back.parts[0].values) EXPECT_TRUE(std::isnan(v));  // the divergence is seen, not hidden
}

TEST(SparseDelta, EncodingIntoABufferKeepsTheCallersHeaderAndDecodesAfterIt) {
  const SparseDelta d = delta({0, 4}, 1.5f, {1, 2}, -2.0f);
  std::vector<std::uint8_t> buf(8, 0xAB);  // a caller's 8-byte header, then a larger earlier payload's bytes
  buf.resize(500, 0xCD);
  d.encode(buf, kLayout, ValueType::Float16, 8);
  EXPECT_EQ(buf.size(), sparse_reference::encode(d, kLayout, ValueType::Float16, 8).size());
  EXPECT_EQ(buf[0], 0xAB);
  EXPECT_EQ(buf[7], 0xAB);
  const SparseDelta back = sparse_reference::decode(buf, kLayout, ValueType::Float16, 8);
  SparseDelta merged(2), spare(2);  // the exchange's own decoder, into an empty delta
  merged.merge_encoded(buf, kLayout, ValueType::Float16, 8, spare);
  for (const SparseDelta* x : {&back, static_cast<const SparseDelta*>(&merged)}) {
    EXPECT_EQ(x->parts[0].rows, d.parts[0].rows);
    EXPECT_EQ(x->parts[0].values, d.parts[0].values);  // all exact in float16
    EXPECT_EQ(x->parts[1].rows, d.parts[1].rows);
    EXPECT_EQ(x->parts[1].values, d.parts[1].values);
    EXPECT_TRUE(x->parts[1].weights.empty());
  }
}

namespace {

// Both of the exchange's decoders, merging into a delta and adding to weights, reject `bytes`.
void expect_rejected(const std::vector<std::uint8_t>& bytes) {
  SparseDelta into(2), spare(2);
  EXPECT_THROW(into.merge_encoded(bytes, kLayout, ValueType::Float32, 0, spare), comm::Error);
  std::vector<float> w(23, 0.0f);
  EXPECT_THROW(SparseDelta::add_encoded(bytes, kLayout, ValueType::Float32, 0, w.data()), comm::Error);
}

}  // namespace

TEST(SparseDelta, DecodeRejectsPayloadsThatDoNotFitTheLayout) {
  const SparseDelta d = delta({1, 2}, 1.0f, {3}, 1.0f);
  auto bytes = sparse_reference::encode(d, kLayout, ValueType::Float32);
  auto shorter = bytes;
  shorter.pop_back();
  expect_rejected(shorter);
  auto longer = bytes;
  longer.push_back(0);
  expect_rejected(longer);
  // Row 1 of table 1 is 4 bytes after the header (flags, 2 counts) and table 0's two rows and six values.
  auto outside = bytes;
  const std::uint32_t row = 9;  // table 1 has 4 rows
  std::memcpy(outside.data() + 12 + 8 + 24, &row, 4);
  expect_rejected(outside);
  auto many = bytes;
  const std::uint32_t count = 1u << 30;
  std::memcpy(many.data() + 4, &count, 4);
  expect_rejected(many);
}
