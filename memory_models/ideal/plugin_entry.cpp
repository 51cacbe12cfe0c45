// The simfa_memory_ideal plugin: a fixed-latency, unlimited-bandwidth memory port.
#include "simfa/plugin.h"

#include "ideal_memory.h"

SIMFA_PLUGIN("simfa_memory_ideal",
             simfa::component_info<simfa::memory_models::IdealMemory>(
                 "memory.ideal", "1.0.0",
                 "every request answered after a fixed latency, unlimited bandwidth"))
