// The simfa_engines plugin: the TMA engines (levels 0 and 1) and the tensor-core engine.
#include "simfa/plugin.h"

#include "tma_fixed.h"
#include "tma_traffic.h"
#include "wgmma_half_n.h"

using simfa::component_info;
using namespace simfa::engines;

SIMFA_PLUGIN("simfa_engines",
             component_info<TmaFixed>(
                 "tma.fixed", "1.0.0",
                 "level-0 TMA: setup latency + a per-SM bandwidth queue, no memory traffic"),
             component_info<TmaTraffic>(
                 "tma.traffic", "1.0.0",
                 "level-1 TMA: setup latency, then the op's deduplicated lines as memory requests"),
             component_info<WgmmaHalfN>(
                 "wgmma.half_n", "1.0.0",
                 "in-order tensor-core pipeline with an instruction buffer and an N/2 latency law"))
