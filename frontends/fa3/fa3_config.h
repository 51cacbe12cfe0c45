// The parameters every fa3 component shares (workload.fa3, workload.fa3_events, gen.fa3): the
// attention shape, FA3's tiling, and the unit throughputs the softmax bubbles come from.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "fa3_kernel.h"
#include "simfa/component.h"
#include "simfa/params.h"

namespace simfa::fa3 {

void describe_fa3_keys(Schema& schema);

/// The kernel a parameter table describes: model presets first, then explicit keys. Throws
/// InputError at the offending key.
Fa3Kernel read_fa3_kernel(const Params& params, const GpuConfig& gpu);

/// The resolved keys and derived values, for the stats file.
std::vector<std::pair<std::string, std::string>> fa3_parameters(const Fa3Kernel& kernel);

/// The resolved shape as an inline spec ("batch=1,heads=32,...").
std::string fa3_spec(const Fa3Kernel& kernel);

}  // namespace simfa::fa3
