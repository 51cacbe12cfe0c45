// `l2.remote_copy`: the paper's behavioral proxy for Hopper's partitioned L2 (section IV-C). The
// slices form two partitions (slice s is in partition s / (slices / 2)) and each SM is near one.
// A request whose home slice (slice map over all slices) is in the far partition pays
// far_latency on top of the slice's timing; a far read hit or fill may leave a shadow copy in the
// near partition (slice = near partition's first slice + slice map over slices / 2), which later
// near reads hit at near latency. Shadow lines are ordinary LRU lines there: they compete with
// the near partition's own lines for capacity.
//
// Insertion: with U uniform in [0, 1) from a splitmix64 stream seeded with the component seed,
// a shadow copy is inserted when occ < occupancy_threshold and
//   U < max_insert_probability x (1 - occ / occupancy_threshold),
// where occ is the fraction of the target set's ways already holding shadow lines. The share of
// a set that shadow lines may take is thus capped, and insertion slows as it approaches the cap.
// Writes go to the home slice and drop the line's shadow copy first.
#pragma once

#include <cstdint>
#include <vector>

#include "simfa/component.h"
#include "simfa/memory.h"
#include "sliced_cache.h"

namespace simfa::memory_models {

class RemoteCopyL2 final : public SlicedCache {
 public:
  explicit RemoteCopyL2(const BuildContext& context);
  static void describe(Schema& schema);

  void send(Cycle now, const MemRequest& request) override;

  /// The partition SM `sm` is near (0 or 1).
  std::uint32_t partition_of_sm(std::uint32_t sm) const { return near_partition_[sm]; }
  /// The slice of `partition` that holds shadow copies of `line`.
  std::uint32_t shadow_slice(std::uint32_t partition, std::uint64_t line) const {
    return partition * half_ + slice_of(line, half_);
  }

 private:
  void on_served(Cycle now, std::uint32_t slice, std::uint64_t line, std::size_t base,
                 const MemRequest& request, Route route) override;
  void on_shadow_miss(Cycle now, const MemRequest& request) override;
  Route far_route() const { return Route{far_latency_, true, false}; }
  /// Uniform in [0, 1): splitmix64 (Steele, Lea, Flood, OOPSLA 2014), the top 53 bits.
  double uniform();

  // A placement's other slice is the line's slice within a partition (the shadow copies' map).
  // Each request computed its line's slices and set three to six times, the prediction's and its
  // own; with the placements, mostly once.
  std::uint32_t shadow_offset(Placement& p) const {
    if (p.other == kUnknown) p.other = static_cast<std::uint16_t>(slice_of(p.line, half_));
    return p.other;
  }

  std::uint32_t half_;
  Cycle far_latency_;
  double max_insert_probability_;
  double occupancy_threshold_;
  std::vector<std::uint8_t> near_partition_;  ///< by SM index, all 2^16 (sm_partition)
  std::uint64_t rng_state_;

  Counter& far_requests_;
  Counter& shadow_hits_;
  Counter& fabric_read_bytes_;
  Counter& shadow_insertions_;
  std::vector<Counter*> slice_insertions_;
};

}  // namespace simfa::memory_models
