// main() for GoogleTest binaries that run under mpiexec: MPI lives for the whole test run. tests/cpp/meson.build
// starts them with a time limit (meson timeout 60 s, MPIEXEC_TIMEOUT=50), so a hang fails the test.
#pragma once

#include <gtest/gtest.h>

#include "comm/environment.hpp"

#define FEDAVG_MPI_TEST_MAIN                                       \
  int main(int argc, char** argv) {                                \
    fedavg::comm::Environment env(argc, argv);                     \
    ::testing::InitGoogleTest(&argc, argv);                        \
    if (env.world_rank() != 0) ::testing::GTEST_FLAG(output) = ""; \
    return RUN_ALL_TESTS();                                        \
  }
