// CTA dispatch policies: round-robin over SMs and fill-first.
#include "cta_dispatchers.h"

namespace simfa::policies {

RoundRobinDispatch::RoundRobinDispatch(const BuildContext& /*context*/) {}

void RoundRobinDispatch::describe(Schema& /*schema*/) {}

std::size_t RoundRobinDispatch::choose(std::span<const int> candidates,
                                       std::uint64_t /*cta_index*/) {
  std::size_t chosen = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i] > last_sm_) {
      chosen = i;
      break;
    }
  }
  last_sm_ = candidates[chosen];
  return chosen;
}

FillDispatch::FillDispatch(const BuildContext& /*context*/) {}

void FillDispatch::describe(Schema& /*schema*/) {}

std::size_t FillDispatch::choose(std::span<const int> /*candidates*/,
                                 std::uint64_t /*cta_index*/) {
  return 0;
}

}  // namespace simfa::policies
