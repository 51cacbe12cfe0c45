#include "linear_slice_map.h"

namespace simfa::memory_models {

void LinearSliceMap::describe(Schema& /*schema*/) {}  // no parameters, no statistics

LinearSliceMap::LinearSliceMap(const BuildContext& /*context*/) {}

}  // namespace simfa::memory_models
