// Microbenchmark for bench/mpi_exchange.py: moving one model's weights (float32) between local MPI ranks, as
// the round's exchange does, with the program's way of waiting in a collective (MPI_Test, sleeping 20 us between
// polls for the first 5 ms, then twice as long each time, up to 1 ms).
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
  const auto start = std::chrono::steady_clock::now();
  std::chrono::microseconds sleep(20);
  int done = 0;
  for (;;) {
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(sleep);
    if (std::chrono::steady_clock::now() - start > std::chrono::milliseconds(5))
      sleep = std::min(2 * sleep, std::chrono::microseconds(1000));
  }
}

// What the program does for a point-to-point message: poll MPI_Iprobe as wait_all polls, then receive the
// message, which has arrived, with MPI_Recv.
void probe_then_receive(float* into, int n, int source, int tag) {
  const auto start = std::chrono::steady_clock::now();
  std::chrono::microseconds sleep(20);
  for (int there = 0;;) {
    MPI_Iprobe(source, tag, MPI_COMM_WORLD, &there, MPI_STATUS_IGNORE);
    if (there) break;
    std::this_thread::sleep_for(sleep);
    if (std::chrono::steady_clock::now() - start > std::chrono::milliseconds(5))
      sleep = std::min(2 * sleep, std::chrono::microseconds(1000));
  }
  MPI_Recv(into, n, MPI_FLOAT, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
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
  const char* names[] = {"MPI_Reduce (blocking)", "MPI_Ireduce",
                         "MPI_Iallreduce",        "MPI_Ibcast",
                         "Isend to rank 0 + add", "Isend down the tree (broadcast)"};
  for (int op = 0; op < 6; ++op) {
    std::vector<double> ms;
    for (int it = 0; it < reps; ++it) {
      sleepy_barrier();
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<MPI_Request> r(1, MPI_REQUEST_NULL);
      switch (op) {
        case 0: MPI_Reduce(mine.data(), sum.data(), n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD); break;
        case 1: MPI_Ireduce(mine.data(), sum.data(), n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD, &r[0]); break;
        case 2: MPI_Iallreduce(mine.data(), sum.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r[0]); break;
        case 3: MPI_Ibcast(mine.data(), n, MPI_FLOAT, 0, MPI_COMM_WORLD, &r[0]); break;
        case 5: {
          // Rank 0 sends to 1; rank r receives from its parent (0 for 1, else r/2) and passes on to 2r and 2r+1.
          if (rank != 0) probe_then_receive(incoming.data(), n, rank == 1 ? 0 : rank / 2, 1);
          std::vector<MPI_Request> sends;
          for (int child : {rank == 0 ? 1 : 2 * rank, rank == 0 ? -1 : 2 * rank + 1}) {
            if (child < 1 || child >= size) continue;
            sends.emplace_back();
            MPI_Isend(rank == 0 ? mine.data() : incoming.data(), n, MPI_FLOAT, child, 1, MPI_COMM_WORLD, &sends.back());
          }
          if (!sends.empty()) wait_all(sends);
          r[0] = MPI_REQUEST_NULL;
          break;
        }
        default:
          if (rank != 0) {
            MPI_Isend(mine.data(), n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &r[0]);
          } else {
            std::fill(sum.begin(), sum.end(), 0.0f);
            for (int src = 1; src < size; ++src) {
              probe_then_receive(incoming.data(), n, src, 0);
              for (int i = 0; i < n; ++i) sum[static_cast<std::size_t>(i)] += incoming[static_cast<std::size_t>(i)];
            }
          }
      }
      wait_all(r);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    // Rank 0 finishes last in every operation but the broadcasts; report the slowest rank's median.
    std::sort(ms.begin(), ms.end());
    double median = ms[ms.size() / 2], worst = 0.0;
    MPI_Reduce(&median, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) std::printf("%s\t%d\t%.3f\n", names[op], size, worst);
  }
  MPI_Finalize();
  return 0;
}
