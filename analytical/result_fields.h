// Every quantity of an AnalyticalResult, declared once with its name, unit and description: the
// CSV columns, the JSON keys and docs/analytical.md's output table all read this list.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "analytical/model.h"

namespace simfa::analytical {

struct ResultField {
  std::string_view name;
  std::string_view unit;
  std::string_view doc;
  /// Numeric fields; null for the named ones.
  double (*value)(const AnalyticalResult&);
  /// Named fields (regime, bound); null for numeric ones.
  std::string_view (*label)(const AnalyticalResult&);
  /// Workloads the field applies to: bit 1 << WorkloadKind.
  std::uint8_t kinds;

  bool applies_to(WorkloadKind kind) const { return (kinds >> static_cast<int>(kind)) & 1u; }
};

std::span<const ResultField> result_fields();

}  // namespace simfa::analytical
