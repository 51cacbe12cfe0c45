#include "xor_slice_map.h"

namespace simfa::memory_models {

void XorSliceMap::describe(Schema& /*schema*/) {}  // no parameters, no statistics

XorSliceMap::XorSliceMap(const BuildContext& /*context*/) {}

}  // namespace simfa::memory_models
