// The marks of the rows a host's learners wrote (comm::SharedRowMarks) among three ranks that map them: rank 0
// takes what all marked, ascending and each row once, and the marks are clear after; a row marked while rank 0
// takes is taken then or in its next take, never lost. Runs under mpiexec -n 3, time-limited by meson (timeout
// 60 s, MPIEXEC_TIMEOUT=50).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "comm/shared_row_marks.hpp"
#include "mpi_main.hpp"

using namespace fedavg;

namespace {

void barrier(const comm::Communicator& world, const comm::Deadline& deadline) { world.ibarrier().wait_until(deadline); }

}  // namespace

TEST(SharedRowMarks, TheTakerGetsEveryMarkedRowOnceInOrder) {
  auto world = comm::Communicator::world();
  ASSERT_EQ(world.size(), 3);
  const auto deadline = comm::Deadline::after(20);
  // Two tables of 1000 and 500 rows: marks 0..999, then 1000..1499.
  comm::SharedRowMarks marks(world, 1500, deadline);
  EXPECT_EQ(marks.rows(), 1500u);
  const int me = world.rank();
  // Each rank marks its own rows of both tables, and all mark row 7 of the first and row 499 of the second.
  std::vector<std::uint32_t> first, second;
  for (std::uint32_t r = static_cast<std::uint32_t>(me); r < 1000; r += 30) first.push_back(r);
  for (std::uint32_t r = 10u * static_cast<std::uint32_t>(me); r < 500; r += 45) second.push_back(r);
  first.push_back(7);
  second.push_back(499);
  marks.mark(0, first);
  marks.mark(1000, second);
  barrier(world, deadline);
  if (me == 0) {
    std::set<std::uint32_t> want_first, want_second;
    for (int k = 0; k < 3; ++k) {
      for (std::uint32_t r = static_cast<std::uint32_t>(k); r < 1000; r += 30) want_first.insert(r);
      for (std::uint32_t r = 10u * static_cast<std::uint32_t>(k); r < 500; r += 45) want_second.insert(r);
    }
    want_first.insert(7);
    want_second.insert(499);
    std::vector<std::uint32_t> got_first, got_second;
    marks.take(0, 1000, got_first);
    marks.take(1000, 500, got_second);
    EXPECT_EQ(got_first, std::vector<std::uint32_t>(want_first.begin(), want_first.end()));
    EXPECT_EQ(got_second, std::vector<std::uint32_t>(want_second.begin(), want_second.end()));
    std::vector<std::uint32_t> again;
    marks.take(0, 1500, again);
    EXPECT_TRUE(again.empty()) << again.size() << " rows still marked after the take";
  }
  barrier(world, deadline);
  marks.release(deadline);
}

TEST(SharedRowMarks, RowsMarkedDuringTakesAreNeverLost) {
  // Ranks 1 and 2 mark every row of theirs many times while rank 0 takes again and again: what rank 0 has taken
  // by its last take, after the markers are done, is every row they marked.
  auto world = comm::Communicator::world();
  const auto deadline = comm::Deadline::after(20);
  const std::size_t rows = 4096;
  comm::SharedRowMarks marks(world, rows, deadline);
  const int me = world.rank();
  if (me == 0) {
    auto done = world.ibarrier();  // it completes once the markers enter it, when they are done marking
    std::set<std::uint32_t> taken;
    std::vector<std::uint32_t> got;
    bool markers_done = false;
    while (!markers_done) {
      markers_done = done.test();
      got.clear();
      marks.take(0, rows, got);
      taken.insert(got.begin(), got.end());
    }
    got.clear();
    marks.take(0, rows, got);  // what was marked after the last take in the loop
    taken.insert(got.begin(), got.end());
    std::size_t missing = 0;
    for (std::uint32_t r = 0; r < rows; ++r)
      if (r % 3 != 0) missing += taken.count(r) == 0;
    EXPECT_EQ(missing, 0u);
    for (const std::uint32_t r : taken) EXPECT_NE(r % 3, 0u) << "row " << r << " was never marked";
  } else {
    std::vector<std::uint32_t> mine;
    for (std::uint32_t r = static_cast<std::uint32_t>(me); r < rows; r += 3) mine.push_back(r);
    for (int k = 0; k < 200; ++k) marks.mark(0, mine);
    world.ibarrier().wait_until(deadline);  // rank 0's `done`
  }
  barrier(world, deadline);
  marks.release(deadline);
}

FEDAVG_MPI_TEST_MAIN
