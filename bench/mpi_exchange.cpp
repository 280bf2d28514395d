// Microbenchmark for bench/mpi_exchange.py: moving one model's weights (float32) between local MPI ranks, as
// the round's exchange does, with the program's way of waiting (MPI_Test and a 20 us sleep between polls).
// Rank 0 plays the Dispatcher. Prints one line per operation: name, ranks, median milliseconds.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

void wait_all(std::vector<MPI_Request>& requests) {
  int done = 0;
  for (;;) {
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void sleepy_barrier() {
  std::vector<MPI_Request> r(1);
  MPI_Ibarrier(MPI_COMM_WORLD, &r[0]);
  wait_all(r);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? std::atoi(argv[1]) : 320000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 30;
  std::vector<float> mine(static_cast<std::size_t>(n), 1.0f), sum(static_cast<std::size_t>(n)),
      incoming(static_cast<std::size_t>(n));
  const char* names[] = {"MPI_Reduce (blocking)", "MPI_Ireduce", "MPI_Iallreduce", "MPI_Ibcast",
                         "Isend to rank 0 + add"};
  for (int op = 0; op < 5; ++op) {
    std::vector<double> ms;
    for (int it = 0; it < reps; ++it) {
      sleepy_barrier();
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<MPI_Request> r(1, MPI_REQUEST_NULL);
      switch (op) {
        case 0:
          MPI_Reduce(mine.data(), sum.data(), n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
          break;
        case 1:
          MPI_Ireduce(mine.data(), sum.data(), n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD, &r[0]);
          break;
        case 2:
          MPI_Iallreduce(mine.data(), sum.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
          break;
        case 3:
          MPI_Ibcast(mine.data(), n, MPI_FLOAT, 0, MPI_COMM_WORLD, &r[0]);
          break;
        default:
          if (rank != 0) {
            MPI_Isend(mine.data(), n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &r[0]);
          } else {
            std::fill(sum.begin(), sum.end(), 0.0f);
            for (int src = 1; src < size; ++src) {
              MPI_Irecv(incoming.data(), n, MPI_FLOAT, src, 0, MPI_COMM_WORLD, &r[0]);
              wait_all(r);
              for (int i = 0; i < n; ++i) sum[static_cast<std::size_t>(i)] += incoming[static_cast<std::size_t>(i)];
            }
          }
      }
      wait_all(r);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    // Rank 0 finishes last in every operation but the broadcast; report the slowest rank's median.
    std::sort(ms.begin(), ms.end());
    double median = ms[ms.size() / 2], worst = 0.0;
    MPI_Reduce(&median, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) std::printf("%s\t%d\t%.3f\n", names[op], size, worst);
  }
  MPI_Finalize();
  return 0;
}
