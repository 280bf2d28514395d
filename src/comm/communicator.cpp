#include "comm/communicator.hpp"

#include <climits>
#include <utility>

#include "comm/error.hpp"

namespace fedavg::comm {
namespace {

int to_int_count(std::size_t n, const std::string& what) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw Error(what + ": message of " + std::to_string(n) + " elements is too large");
  return static_cast<int>(n);
}

#if MPI_VERSION >= 4
// MPI 4 counts messages in MPI_Count: a point-to-point message may hold 2^31 elements or more (a 10^6-word model's
// weights in float32 are 2.4 GB).
MPI_Count to_count(std::size_t n, const std::string&) { return static_cast<MPI_Count>(n); }
#else
int to_count(std::size_t n, const std::string& what) { return to_int_count(n, what); }
#endif

std::string peer(const char* op, Tag tag, int rank) {
  return std::string(op) + " tag " + std::to_string(tag_value(tag)) + " rank " + std::to_string(rank);
}

}  // namespace

void throw_bad_count(long long n) {
  throw Error("a received message's size is not a whole number of elements (MPI count " + std::to_string(n) + ")");
}

Communicator::Communicator(MPI_Comm c) : comm_(c) {
  if (comm_ == MPI_COMM_NULL) return;
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  std::vector<int> members(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) members[static_cast<std::size_t>(r)] = r;
  world_ranks_.resize(members.size());
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  int rc = MPI_Comm_group(comm_, &group);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_group(MPI_COMM_WORLD, &world);
  if (rc == MPI_SUCCESS) rc = MPI_Group_translate_ranks(group, size_, members.data(), world, world_ranks_.data());
  if (world != MPI_GROUP_NULL) MPI_Group_free(&world);
  if (group != MPI_GROUP_NULL) MPI_Group_free(&group);
  check_mpi(rc, "MPI_Group_translate_ranks");
}

std::vector<int> Communicator::others() const {
  std::vector<int> out;
  for (int r = 0; r < size_; ++r)
    if (r != rank_) out.push_back(world_rank(r));
  return out;
}

int Communicator::world_rank(int rank) const {
  if (rank < 0 || rank >= size_) return rank;
  return world_ranks_[static_cast<std::size_t>(rank)];
}

Communicator Communicator::world() {
  MPI_Comm c = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &c), "MPI_Comm_dup world");
  return Communicator(c);
}

Communicator Communicator::split(bool member, int key) const {
  MPI_Comm c = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm_, member ? 0 : MPI_UNDEFINED, key, &c), "MPI_Comm_split");
  return Communicator(c);
}

Communicator Communicator::split_groups(int group, int key) const {
  MPI_Comm c = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm_, group >= 0 ? group : MPI_UNDEFINED, key, &c), "MPI_Comm_split");
  return Communicator(c);
}

int Communicator::ranks_on_node() const {
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int n = 0;
  const int rc = MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  check_mpi(rc, "MPI_Comm_size node");
  return n;
}

std::vector<int> Communicator::hosts() const {
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  // Rank 0 of `node` is its lowest member here (the split's key is the rank).
  MPI_Group node_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  int rc = MPI_Comm_group(node, &node_group);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_group(comm_, &group);
  const int zero = 0;
  int lowest = MPI_UNDEFINED;
  if (rc == MPI_SUCCESS) rc = MPI_Group_translate_ranks(node_group, 1, &zero, group, &lowest);
  if (group != MPI_GROUP_NULL) MPI_Group_free(&group);
  if (node_group != MPI_GROUP_NULL) MPI_Group_free(&node_group);
  MPI_Comm_free(&node);
  check_mpi(rc, "MPI_Group_translate_ranks");
  std::vector<int> out(static_cast<std::size_t>(size_));
  check_mpi(MPI_Allgather(&lowest, 1, MPI_INT, out.data(), 1, MPI_INT, comm_), "MPI_Allgather hosts");
  return out;
}

std::vector<std::string> Communicator::host_names() const {
  std::vector<char> mine(MPI_MAX_PROCESSOR_NAME + 1, '\0');
  int length = 0;
  check_mpi(MPI_Get_processor_name(mine.data(), &length), "MPI_Get_processor_name");
  std::vector<char> all(rank_ == 0 ? mine.size() * static_cast<std::size_t>(size_) : 0);
  const int n = static_cast<int>(mine.size());
  check_mpi(MPI_Gather(mine.data(), n, MPI_CHAR, all.data(), n, MPI_CHAR, 0, comm_), "MPI_Gather host names");
  std::vector<std::string> out;
  for (std::size_t r = 0; r < all.size(); r += mine.size()) out.emplace_back(all.data() + r);
  return out;
}

Communicator::Communicator(Communicator&& o) noexcept
    : comm_(std::exchange(o.comm_, MPI_COMM_NULL)),
      rank_(o.rank_),
      size_(o.size_),
      world_ranks_(std::move(o.world_ranks_)) {}

Communicator& Communicator::operator=(Communicator&& o) noexcept {
  if (this != &o) {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
    rank_ = o.rank_;
    size_ = o.size_;
    world_ranks_ = std::move(o.world_ranks_);
  }
  return *this;
}

Communicator::~Communicator() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

Request Communicator::isend_raw(const void* data, std::size_t n, MPI_Datatype type, int dest, Tag tag) const {
  const std::string what = peer("send", tag, dest);
  MPI_Request r = MPI_REQUEST_NULL;
#if MPI_VERSION >= 4
  check_mpi(MPI_Isend_c(data, to_count(n, what), type, dest, tag_value(tag), comm_, &r), what);
#else
  check_mpi(MPI_Isend(data, to_count(n, what), type, dest, tag_value(tag), comm_, &r), what);
#endif
  return Request(r, what, {world_rank(dest)}, true);
}

Request Communicator::isend_empty(int dest, Tag tag) const { return isend_raw(nullptr, 0, MPI_BYTE, dest, tag); }

std::optional<Arrival> Communicator::probe(int source, std::optional<Tag> tag) const {
  int flag = 0;
  MPI_Status st;
  // MPICH 4.0 (ch4:ucx) looks for the message before it advances the network, so a probe that finds nothing may
  // just have brought it in: a message that arrived milliseconds earlier is missed by the first probe and seen by
  // the second (50 times of 50). Without the second look every polled wait noticed its message one poll late,
  // and a learner saw the Dispatcher's Cut one training step late.
  for (int look = 0; look < 2 && !flag; ++look)
    check_mpi(MPI_Iprobe(source, tag ? tag_value(*tag) : MPI_ANY_TAG, comm_, &flag, &st), "MPI_Iprobe");
  if (!flag) return std::nullopt;
  return Arrival{st.MPI_SOURCE, static_cast<Tag>(st.MPI_TAG), st};
}

Arrival Communicator::await_message(int source, Tag tag, const Deadline& deadline, const std::string& what,
                                    const Pace& pace) const {
  std::optional<Arrival> a;
  const Deadline on = source == kAnySource || !deadline.peers.empty() ? deadline : deadline.on({world_rank(source)});
  poll_until([&] { return (a = probe(source, tag)).has_value(); }, on, what, pace);
  return *a;
}

void Communicator::recv_raw(void* data, std::size_t n, MPI_Datatype type, const Arrival& a) const {
  const std::string what = peer("recv", a.tag, a.source);
#if MPI_VERSION >= 4
  check_mpi(MPI_Recv_c(data, to_count(n, what), type, a.source, tag_value(a.tag), comm_, MPI_STATUS_IGNORE), what);
#else
  check_mpi(MPI_Recv(data, to_count(n, what), type, a.source, tag_value(a.tag), comm_, MPI_STATUS_IGNORE), what);
#endif
}

void Communicator::discard(const Arrival& a) const {
  std::vector<std::uint8_t> sink(a.count<std::uint8_t>());
  recv_raw(sink.data(), sink.size(), MPI_BYTE, a);
}

void Communicator::size_mismatch(const Arrival& a, std::size_t want, std::size_t got) const {
  throw Error("message tag " + std::to_string(tag_value(a.tag)) + " from rank " + std::to_string(a.source) + " holds " +
              std::to_string(got) + " elements, expected " + std::to_string(want));
}

Request Communicator::ibarrier() const {
  MPI_Request r = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm_, &r), "MPI_Ibarrier");
  return Request(r, "barrier", others());
}

Request Communicator::ibcast_raw(void* data, std::size_t n, MPI_Datatype type, int root) const {
  MPI_Request r = MPI_REQUEST_NULL;
  const std::string what = "broadcast from rank " + std::to_string(root);
  check_mpi(MPI_Ibcast(data, to_int_count(n, what), type, root, comm_, &r), what);
  return Request(r, what, root == rank_ ? others() : std::vector<int>{world_rank(root)});
}

Request Communicator::iallreduce_raw(const void* in, void* out, std::size_t n, MPI_Datatype type, MPI_Op op) const {
  MPI_Request r = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(in, out, to_int_count(n, "allreduce"), type, op, comm_, &r), "MPI_Iallreduce");
  return Request(r, "allreduce", others());
}

}  // namespace fedavg::comm
