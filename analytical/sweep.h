// Design-space sweeps: one or more parameters (workload keys or GPU parameters) varied over a
// grid, every point evaluated by the analytical model. Axes are written as on the command line:
//   seqlen=512..65536:x2        geometric: 512, 1024, ..., 65536
//   l2_size=20MiB..60MiB:+10MiB linear
//   model=llama3-8b,llama3-70b  a list
// Points are visited in row-major order (the last axis varies fastest) with one copy of the spec
// and the GPU per point and no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analytical/gpu.h"
#include "analytical/model.h"
#include "analytical/workload.h"

namespace simfa::analytical {

struct SweepAxis {
  std::string name;
  bool gpu = false;  ///< a GPU parameter (key is a GpuKey) or a workload key (an index)
  int key = 0;
  std::vector<double> values;  ///< choice keys: indices; booleans: 0 or 1
};

/// Parses one axis, "name=values", for a workload of `kind`. Throws simfa::InputError
/// ("--sweep TEXT: error: ...") on an unknown name (with did-you-mean), a malformed range or
/// list, or a value out of range.
SweepAxis parse_sweep(std::string_view text, WorkloadKind kind);

/// Value i of an axis as a spec or manifest writes it ("llama3-70b", "32768", "26214400").
std::string sweep_value_text(const SweepAxis& axis, WorkloadKind kind, std::size_t i);

struct SweepPoint {
  std::span<const std::size_t> index;  ///< per axis, into SweepAxis::values
  const Workload& workload;
  const AnalyticalGpu& gpu;
  const AnalyticalResult& result;
};

class SweepGrid {
 public:
  /// Throws simfa::InputError when two axes name the same parameter or the grid exceeds
  /// kMaxPoints.
  SweepGrid(const WorkloadSpec& base, const AnalyticalGpu& gpu, std::vector<SweepAxis> axes);

  static constexpr std::uint64_t kMaxPoints = 1'000'000'000;

  std::uint64_t size() const { return size_; }
  WorkloadKind kind() const { return base_.kind; }
  const std::vector<SweepAxis>& axes() const { return axes_; }

  /// Resolves every point and checks its GPU; throws simfa::InputError naming the first
  /// invalid point. Run it before for_each, which assumes valid points.
  void validate() const;

  /// Calls visit(const SweepPoint&) for every point, last axis fastest.
  template <class Visit>
  void for_each(Visit&& visit) const {
    std::vector<std::size_t> index(axes_.size(), 0);
    for (std::uint64_t n = 0; n < size_; ++n) {
      WorkloadSpec spec = base_;
      AnalyticalGpu gpu = gpu_;
      apply(index, spec, gpu);
      const Workload workload = resolve_workload(spec);
      const AnalyticalResult result = analyze(gpu, workload);
      visit(SweepPoint{index, workload, gpu, result});
      advance(index);
    }
  }

 private:
  void apply(std::span<const std::size_t> index, WorkloadSpec& spec, AnalyticalGpu& gpu) const;
  void advance(std::vector<std::size_t>& index) const;

  WorkloadSpec base_;
  AnalyticalGpu gpu_;
  std::vector<SweepAxis> axes_;
  std::uint64_t size_ = 1;
};

}  // namespace simfa::analytical
