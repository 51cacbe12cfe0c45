#include "memory_hierarchy.h"
#include "simfa/plugin.h"

SIMFA_PLUGIN("simfa-memory-hierarchy",
             simfa::component_info<simfa::memory_models::MemoryHierarchy>(
                 "memory.hierarchy", "1.0.0",
                 "SM -> coalescer -> L2 -> DRAM, each level a plugin in a sub-slot"))
