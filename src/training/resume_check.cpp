#include "training/resume_check.hpp"

#include <algorithm>
#include <cmath>

#include "core/checksum.hpp"
#include "core/error.hpp"
#include "training/progress.hpp"

namespace fedavg::training {

void ResumeCheck::check(const core::Checkpoint& ck) const {
  if (ck.info.data_name != run_.data_name)
    throw core::Error(run_.checkpoint + ": written by run \"" + ck.info.data_name + "\", not \"" + run_.data_name +
                      "\"");
  if (ck.info.strategy != run_.strategy)
    throw core::Error(run_.checkpoint + ": written with strategy " + ck.info.strategy + ", cfg.json says " +
                      run_.strategy);
  check_corpora(ck.corpora);
  if (!run_.sharded && static_cast<int>(ck.positions.size()) != run_.pipelines)
    throw core::Error(run_.checkpoint + ": written with " + std::to_string(ck.positions.size()) +
                      " corpus file(s), this run has " + std::to_string(run_.pipelines));
  if (ck.vocabulary.size() != run_.vocabulary_words || core::checksum(ck.vocabulary) != run_.vocabulary_sum)
    throw core::InputError(run_.checkpoint + ": dataset vocabulary (" + std::to_string(ck.vocabulary.size()) +
                           " words) differs from this run's vocabulary (" + std::to_string(run_.vocabulary_words) +
                           " words): the checkpoint was written with another vocabulary");
}

void ResumeCheck::check_loss(double measured, double recorded) const {
  if (!(std::abs(measured - recorded) <= kLossTolerance * std::max(1.0, std::abs(recorded))))
    throw core::Error(run_.checkpoint + ": the test loss of its weights is " + fmt("%.6f", measured) +
                      ", it recorded " + fmt("%.6f", recorded) + " when it was written: the file, or the test set " +
                      run_.test_path + ", has changed since");
}

void ResumeCheck::check_corpora(const std::vector<core::CorpusSummary>& saved) const {
  if (saved.empty()) return;
  const auto& corpora = run_.corpora;
  if (saved.size() != corpora.size())
    throw core::InputError(run_.checkpoint + ": written from " + std::to_string(saved.size()) +
                           " corpus file(s), this run names " + std::to_string(corpora.size()) +
                           "; resume with the same corpora");
  for (std::size_t i = 0; i < saved.size(); ++i) {
    const core::CorpusSummary &was = saved[i], &now = corpora[i];
    if (was.bytes < 0 || now.bytes < 0 || (was.bytes == now.bytes && was.hash == now.hash)) continue;
    throw core::InputError(
        "corpus " + run_.corpus_files[i] + ": not the file " + run_.checkpoint + " was written from (" +
        (was.bytes != now.bytes ? "it had " + std::to_string(was.bytes) + " bytes, now " + std::to_string(now.bytes)
                                : std::string("its first or last MiB differ")) +
        "); resume with the same corpora, or start a new run with --overwrite");
  }
}

}  // namespace fedavg::training
