// The simfa_dram plugin: DRAM backends for the memory hierarchy's [dram] slot.
#include "simfa/plugin.h"

#include "fixed_dram.h"
#include "hbm3_dram.h"

SIMFA_PLUGIN("simfa_dram",
             simfa::component_info<simfa::memory_models::FixedDram>(
                 "dram.fixed", "1.0.0", "a FIFO bandwidth queue plus a fixed latency in ns"),
             simfa::component_info<simfa::memory_models::Hbm3Dram>(
                 "dram.hbm3", "1.0.0",
                 "HBM3 stacks, channels, pseudo-channels and banks with open rows, FR-FCFS and "
                 "timing by name from a preset"))
