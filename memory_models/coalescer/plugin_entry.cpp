// The simfa_coalescer plugin: the SM-facing port of the memory hierarchy (kind "coalescer").
#include "lrc_coalescer.h"
#include "pass_through_coalescer.h"
#include "simfa/plugin.h"

SIMFA_PLUGIN("simfa_coalescer",
             simfa::component_info<simfa::memory_models::LrcCoalescer>(
                 "coalescer.lrc", "1.0.0",
                 "merges in-flight identical line reads of an SM group (a pair by default)"),
             simfa::component_info<simfa::memory_models::PassThroughCoalescer>(
                 "coalescer.none", "1.0.0", "no coalescing: every request goes to the L2"))
