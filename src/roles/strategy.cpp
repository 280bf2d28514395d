#include "roles/strategy.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace fedavg::roles {
namespace {

class FedAvg : public Strategy {
 public:
  void learner_begin(RoundSync& sync, std::vector<float>& w, bool) override { sync.weights(w); }
  void learner_end(RoundSync& sync, std::vector<float>& w) override { sync.average_into_root(w); }
  void dispatcher_begin(RoundSync& sync, std::vector<float>& w, bool) override { sync.weights(w); }
  void dispatcher_end(RoundSync& sync, std::vector<float>& w) override {
    std::fill(w.begin(), w.end(), 0.0f);
    sync.average_into_root(w);
  }
};

// 53-bit FNV-1a hash of the weights' bytes, exact in a double.
double fingerprint(const std::vector<float>& w) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const unsigned char*>(w.data());
  for (std::size_t i = 0; i < w.size() * sizeof(float); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return static_cast<double>(h >> 11);
}

class Bsp : public Strategy {
 public:
  // Only the first round of a process needs the Dispatcher's weights (initial or resumed).
  void learner_begin(RoundSync& sync, std::vector<float>& w, bool first) override {
    if (first) sync.weights(w);
  }
  void learner_end(RoundSync& sync, std::vector<float>& w) override { average_and_check(sync, w); }
  void dispatcher_begin(RoundSync& sync, std::vector<float>& w, bool first) override {
    if (first) sync.weights(w);
  }
  void dispatcher_end(RoundSync& sync, std::vector<float>& w) override {
    std::fill(w.begin(), w.end(), 0.0f);
    average_and_check(sync, w);
  }

 private:
  static void average_and_check(RoundSync& sync, std::vector<float>& w) {
    sync.allreduce_in_place(w);
    const double f = fingerprint(w);
    const auto range = sync.max_of({f, -f});
    if (range[0] != -range[1])
      throw core::Error("bsp: the replicas of the weights differ after the allreduce (they must be bit-identical)");
  }
};

class Bmuf : public Strategy {
 public:
  Bmuf(double block_lr, double momentum, bool nesterov)
      : block_lr_(static_cast<float>(block_lr)), momentum_(static_cast<float>(momentum)), nesterov_(nesterov) {}
  void learner_begin(RoundSync& sync, std::vector<float>& w, bool) override { sync.weights(w); }
  void learner_end(RoundSync& sync, std::vector<float>& w) override { sync.average_into_root(w); }
  void dispatcher_begin(RoundSync& sync, std::vector<float>& w, bool) override {
    sync.weights(w);
    global_ = w;
  }
  void dispatcher_end(RoundSync& sync, std::vector<float>& w) override {
    std::fill(w.begin(), w.end(), 0.0f);
    sync.average_into_root(w);
    if (m_.size() != w.size()) m_.assign(w.size(), 0.0f);
    // g = global - average (a pseudo-gradient); m = mu m + g; global -= lr (nesterov ? g + mu m : m).
    for (std::size_t i = 0; i < w.size(); ++i) {
      const float g = global_[i] - w[i];
      m_[i] = momentum_ * m_[i] + g;
      const float step = nesterov_ ? g + momentum_ * m_[i] : m_[i];
      w[i] = global_[i] - block_lr_ * step;
    }
  }
  std::vector<float>& state() override { return m_; }

 private:
  float block_lr_;
  float momentum_;
  bool nesterov_;
  std::vector<float> global_;
  std::vector<float> m_;
};

}  // namespace

std::unique_ptr<Strategy> Strategy::make(const core::Settings& s) {
  if (s.strategy == "fedavg") return std::make_unique<FedAvg>();
  if (s.strategy == "bsp") return std::make_unique<Bsp>();
  if (s.strategy == "bmuf") return std::make_unique<Bmuf>(s.block_lr, s.block_momentum, s.nesterov);
  throw core::InputError("cfg.json: unknown strategy \"" + s.strategy + "\" (round strategies: fedavg, bsp, bmuf)");
}

}  // namespace fedavg::roles
