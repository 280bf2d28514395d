#include <gtest/gtest.h>

#include "data/windower.hpp"

using fedavg::data::Windower;
using V = std::vector<std::int32_t>;

namespace {

constexpr auto B = Windower::kBreak;
constexpr auto O = Windower::kOov;
constexpr auto E = Windower::kEof;

V all_windows(Windower& w, const V& tokens) {
  V out;
  w.feed(tokens.data(), tokens.size(), 0, out, 1000);
  return out;
}

}  // namespace

TEST(Windower, SlidesOneWordAtATime) {
  Windower w(1, false, false);
  EXPECT_EQ(all_windows(w, {1, 2, 3, 4}), (V{1, 2, 3, 2, 3, 4}));
}

TEST(Windower, LineEndsBreakWindowsByDefault) {
  Windower w(1, false, false);
  EXPECT_EQ(all_windows(w, {1, 2, B, 3, 4, 5, B}), (V{3, 4, 5}));
  Windower cross(1, true, false);
  EXPECT_EQ(all_windows(cross, {1, 2, B, 3, 4, B}), (V{1, 2, 3, 2, 3, 4}));
}

TEST(Windower, UnknownWordsBreakWindowsUnlessAllowed) {
  Windower w(1, false, false);
  EXPECT_EQ(all_windows(w, {1, 2, O, 3, 4, 5}), (V{3, 4, 5}));
  Windower cross(1, false, true);
  EXPECT_EQ(all_windows(cross, {1, 2, O, 3}), (V{1, 2, 3}));
}

TEST(Windower, NeverWrapsAroundTheEndOfTheFile) {
  Windower w(1, true, true);
  EXPECT_EQ(all_windows(w, {1, 2, E, 3, 4}), V{});
  EXPECT_EQ(all_windows(w, {5}), (V{3, 4, 5}));
}

TEST(Windower, ContinuesAcrossBlocks) {
  Windower w(2, false, false);
  EXPECT_EQ(all_windows(w, {1, 2, 3}), V{});
  EXPECT_EQ(all_windows(w, {4, 5, 6}), (V{1, 2, 3, 4, 5, 2, 3, 4, 5, 6}));
}

TEST(Windower, StopsAtMaxWindowsAndResumes) {
  Windower w(1, false, false);
  const V t{1, 2, 3, 4, 5};
  V out;
  auto pos = w.feed(t.data(), t.size(), 0, out, 2);
  EXPECT_EQ(out, (V{1, 2, 3, 2, 3, 4}));
  EXPECT_EQ(pos, 4u);
  out.clear();
  pos = w.feed(t.data(), t.size(), pos, out, 2);
  EXPECT_EQ(out, (V{3, 4, 5}));
  EXPECT_EQ(pos, 5u);
}

TEST(Windower, LongRunsFedInPiecesGiveEverySlidingWindow) {
  // A run far longer than the windower keeps in hand, fed in pieces that stop mid-run, with dropped words.
  Windower w(2, false, false);
  V tokens, kept;
  for (int i = 0; i < 5000; ++i) {
    tokens.push_back(i % 7 == 3 ? Windower::kDropped : i);
    if (i % 7 != 3) kept.push_back(i);
  }
  V out, piece;
  for (std::size_t pos = 0; pos < tokens.size();) {
    piece.clear();
    pos = w.feed(tokens.data(), tokens.size(), pos, piece, 37);
    out.insert(out.end(), piece.begin(), piece.end());
  }
  ASSERT_EQ(out.size(), 5 * (kept.size() - 4));
  for (std::size_t k = 0; k + 4 < kept.size(); ++k)
    ASSERT_EQ(V(out.begin() + static_cast<long>(5 * k), out.begin() + static_cast<long>(5 * k + 5)),
              V(kept.begin() + static_cast<long>(k), kept.begin() + static_cast<long>(k + 5)))
        << "window " << k;
}

TEST(Windower, ReportsAnEpochWithoutWindows) {
  Windower w(2, false, false);
  all_windows(w, {1, 2, B, 3, O, 4, E});
  EXPECT_TRUE(w.empty_epoch_seen());
  Windower ok(1, false, false);
  all_windows(ok, {1, 2, 3, E, 1});
  EXPECT_FALSE(ok.empty_epoch_seen());
}

TEST(Windower, EdgeWindowsMakeEveryWordOfALineATarget) {
  constexpr auto N = Windower::kNoWord;
  Windower w(1, false, false, true);
  EXPECT_EQ(all_windows(w, {1, 2, 3, B}), (V{N, 1, 2, 1, 2, 3, 2, 3, N}));
  EXPECT_EQ(all_windows(w, {5, B, 6, O, 7, E}), V{});  // runs of one word: no context, no window
  Windower two(2, false, false, true);
  EXPECT_EQ(all_windows(two, {1, 2, B}), (V{N, N, 1, 2, N, N, 1, 2, N, N}));
  // Dropped words close the window over them; the end of the file ends the run.
  EXPECT_EQ(all_windows(two, {1, Windower::kDropped, 2, 3, E}), (V{N, N, 1, 2, 3, N, 1, 2, 3, N, 1, 2, 3, N, N}));
}

TEST(Windower, EdgeWindowsOfALongRunFedInPiecesAreTheWholeOnesAndTheEnds) {
  constexpr auto N = Windower::kNoWord;
  Windower whole(2, false, false), edges(2, false, false, true);
  V tokens;
  for (int i = 0; i < 3000; ++i) tokens.push_back(i);
  tokens.push_back(B);
  V inner, out, piece;
  for (std::size_t pos = 0; pos < tokens.size();) {
    piece.clear();
    pos = edges.feed(tokens.data(), tokens.size(), pos, piece, 37);
    out.insert(out.end(), piece.begin(), piece.end());
  }
  whole.feed(tokens.data(), tokens.size(), 0, inner, 100000);
  ASSERT_EQ(out.size(), 5u * 3000);  // a window per word
  EXPECT_EQ(V(out.begin(), out.begin() + 10), (V{N, N, 0, 1, 2, N, 0, 1, 2, 3}));
  EXPECT_EQ(V(out.begin() + 10, out.end() - 10), inner);
  EXPECT_EQ(V(out.end() - 10, out.end()), (V{2996, 2997, 2998, 2999, N, 2997, 2998, 2999, N, N}));
}

TEST(Windower, ReducedWindowsReachOneToWWordsOnEachSideDrawnPerTarget) {
  constexpr auto N = Windower::kNoWord;
  Windower w(3, false, false, false, true, 5);
  V tokens;
  for (int i = 0; i < 2000; ++i) tokens.push_back(i);
  tokens.push_back(B);
  V out;
  w.feed(tokens.data(), tokens.size(), 0, out, 5000);
  ASSERT_EQ(out.size(), 7u * 2000);
  std::vector<int> reaches(4, 0);
  for (std::size_t k = 0; k < 2000; ++k) {
    const V win(out.begin() + static_cast<long>(7 * k), out.begin() + static_cast<long>(7 * k + 7));
    ASSERT_EQ(win[3], static_cast<std::int32_t>(k));
    int left = 0, right = 0;
    for (int j = 2; j >= 0 && win[static_cast<std::size_t>(j)] != N; --j) ++left;
    for (int j = 4; j < 7 && win[static_cast<std::size_t>(j)] != N; ++j) ++right;
    // Both sides reach as far as the draw, or as the line allows; the words are the neighbours, in order.
    const int reach = std::max(left, right);
    ASSERT_TRUE(reach >= 1 && reach <= 3);
    if (k >= 3 && k + 3 < 2000) {
      ASSERT_EQ(left, right) << "window " << k;
    }
    for (int j = 0; j < 7; ++j) {
      if (win[static_cast<std::size_t>(j)] != N) {
        ASSERT_EQ(win[static_cast<std::size_t>(j)], static_cast<int>(k) + j - 3);
      }
    }
    ++reaches[static_cast<std::size_t>(reach)];
  }
  for (int r = 1; r <= 3; ++r) EXPECT_GT(reaches[static_cast<std::size_t>(r)], 550) << "reach " << r;  // about 667
}
