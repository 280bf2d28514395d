// Owns a duplicated MPI communicator (errors return, so every failure reaches check_mpi) and offers the
// nonblocking operations the roles use. Role code never sees MPI_COMM_WORLD or a raw tag.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/request.hpp"
#include "comm/tags.hpp"

namespace fedavg::comm {

inline constexpr int kAnySource = MPI_ANY_SOURCE;

template <typename T> MPI_Datatype datatype();
template <> inline MPI_Datatype datatype<std::int32_t>() { return MPI_INT32_T; }
template <> inline MPI_Datatype datatype<std::int64_t>() { return MPI_INT64_T; }
template <> inline MPI_Datatype datatype<float>() { return MPI_FLOAT; }
template <> inline MPI_Datatype datatype<double>() { return MPI_DOUBLE; }
template <> inline MPI_Datatype datatype<std::uint8_t>() { return MPI_UINT8_T; }

// A received message whose size MPI cannot give in elements of the type asked (MPI_UNDEFINED).
[[noreturn]] void throw_bad_count(long long n);

// A message that has arrived and can be received at once.
struct Arrival {
  int source;
  Tag tag;
  MPI_Status status;
  // Its size in elements of T (MPI 4: past 2^31 too).
  template <typename T> std::size_t count() const {
#if MPI_VERSION >= 4
    MPI_Count n = 0;
    MPI_Get_count_c(&status, datatype<T>(), &n);
#else
    int n = 0;
    MPI_Get_count(&status, datatype<T>(), &n);
#endif
    if (n < 0) throw_bad_count(n);
    return static_cast<std::size_t>(n);
  }
};

class Communicator {
 public:
  // Duplicates MPI_COMM_WORLD.
  static Communicator world();
  // Collective over this communicator. Ranks passing `member == false` get an empty Communicator.
  Communicator split(bool member, int key) const;
  // Collective over this communicator: one communicator per `group` (ranks passing a negative group get an empty
  // one), ordered by `key`.
  Communicator split_groups(int group, int key) const;
  // Collective: how many members share this rank's node (its shared memory).
  int ranks_on_node() const;
  // Collective: the host of every member, by rank: the rank of the lowest member on its node (shared memory).
  std::vector<int> hosts() const;
  // Collective: the host name of every member, by rank (MPI_Get_processor_name), at rank 0; empty elsewhere.
  std::vector<std::string> host_names() const;

  Communicator() = default;
  Communicator(Communicator&& o) noexcept;
  Communicator& operator=(Communicator&& o) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator();

  bool valid() const { return comm_ != MPI_COMM_NULL; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  // The MPI_COMM_WORLD rank of member `rank` (kAnySource for kAnySource).
  int world_rank(int rank) const;
  // The MPI_COMM_WORLD ranks of the other members.
  std::vector<int> others() const;

  // Starts a send of `n` elements; the buffer must stay alive and unchanged until the request completes.
  template <typename T> Request isend(const T* data, std::size_t n, int dest, Tag tag) const {
    return isend_raw(data, n, datatype<T>(), dest, tag);
  }
  // Sends a message with no payload (Shutdown, ShutdownAck); completes at once for such small messages.
  Request isend_empty(int dest, Tag tag) const;

  // A message from `source` (MPI_ANY_SOURCE allowed) with `tag` (nullopt: any tag) that has arrived, if any.
  std::optional<Arrival> probe(int source, std::optional<Tag> tag) const;
  // Waits, sleeping with backoff, until a message from `source` with `tag` has arrived, and returns it ready to
  // receive. Throws comm::Timeout naming `what` once the deadline passes, unless `source`, asked, waits in turn
  // (Verdict). `pace`: see WaitPolicy.
  Arrival await_message(int source, Tag tag, const Deadline& deadline, const std::string& what,
                        const Pace& pace = {}) const;
  // Receives a probed message into `out` (resized to fit). Returns at once: the message has arrived.
  template <typename T> void receive(const Arrival& a, std::vector<T>& out) const {
    out.resize(a.count<T>());
    recv_raw(out.data(), out.size(), datatype<T>(), a);
  }
  // Receives a probed message into a caller buffer of exactly `n` elements; throws if the sizes differ.
  template <typename T> void receive_into(const Arrival& a, T* out, std::size_t n) const {
    if (a.count<T>() != n) size_mismatch(a, n, a.count<T>());
    recv_raw(out, n, datatype<T>(), a);
  }
  // Receives and drops a probed message.
  void discard(const Arrival& a) const;

  // Nonblocking collectives; poll the returned request.
  Request ibarrier() const;
  template <typename T> Request ibcast(T* data, std::size_t n, int root) const {
    return ibcast_raw(data, n, datatype<T>(), root);
  }
  template <typename T> Request iallreduce_sum(const T* in, T* out, std::size_t n) const {
    return iallreduce_raw(in, out, n, datatype<T>(), MPI_SUM);
  }
  template <typename T> Request iallreduce_max(const T* in, T* out, std::size_t n) const {
    return iallreduce_raw(in, out, n, datatype<T>(), MPI_MAX);
  }

 private:
  friend class SharedSegment;  // maps memory over the members of this communicator
  explicit Communicator(MPI_Comm c);
  Request isend_raw(const void* data, std::size_t n, MPI_Datatype type, int dest, Tag tag) const;
  void recv_raw(void* data, std::size_t n, MPI_Datatype type, const Arrival& a) const;
  Request ibcast_raw(void* data, std::size_t n, MPI_Datatype type, int root) const;
  Request iallreduce_raw(const void* in, void* out, std::size_t n, MPI_Datatype type, MPI_Op op) const;
  [[noreturn]] void size_mismatch(const Arrival& a, std::size_t want, std::size_t got) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = -1;
  int size_ = 0;
  std::vector<int> world_ranks_;  // by member
};

}  // namespace fedavg::comm
