// main() for GoogleTest binaries that run under mpiexec: MPI lives for the whole test run.
#pragma once

#include <gtest/gtest.h>

#include "comm/environment.hpp"

#define FEDAVG_MPI_TEST_MAIN                                                   \
  int main(int argc, char** argv) {                                            \
    fedavg::comm::Environment env(argc, argv);                                 \
    ::testing::InitGoogleTest(&argc, argv);                                    \
    if (env.world_rank() != 0) ::testing::GTEST_FLAG(output) = "";             \
    return RUN_ALL_TESTS();                                                    \
  }
