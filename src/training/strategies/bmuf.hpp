// bmuf, block momentum on the averaged update (Chen & Huo 2016), and with nesterov DiLoCo's outer Nesterov step:
// the Dispatcher treats global - average as a pseudo-gradient and steps with block_lr and block_momentum; the
// momentum is checkpointed (docs/strategies.md#bmuf).
#pragma once

#include "core/floats.hpp"
#include "training/strategies/lockstep.hpp"

namespace fedavg::training {

class Bmuf : public Lockstep {
 public:
  Bmuf(double block_lr, double momentum, bool nesterov, CombineRule rule = CombineRule::average())
      : Lockstep(rule),
        block_lr_(static_cast<float>(block_lr)),
        momentum_(static_cast<float>(momentum)),
        nesterov_(nesterov) {}
  std::vector<float>& state() override { return m_; }
  std::string divergence_hint(int learners) const override;

 protected:
  // fedavg's exchanges; the Dispatcher then steps from the round's start along the averaged update.
  void open_round(RoundSync& sync, core::Floats w, bool first) override;
  void close_round(RoundSync& sync, core::Floats w, float share) override;
  // Every round starts from the Dispatcher's weights after its outer step.
  bool opens_with_weights() const override { return true; }
  // The same step on the rows the learners changed (the momentum of the others waits until they change: lazy).
  void outer_step(SparseDelta& average, const Layout& layout) override;
  bool has_outer_step() const override { return true; }

 private:
  float block_lr_;
  float momentum_;
  bool nesterov_;
  std::vector<float> global_;  // Dispatcher: the weights the round started from
  std::vector<float> m_;       // Dispatcher: the block momentum
};

}  // namespace fedavg::training
