// The simfa_l2 plugin: the last-level caches (kind "l2").
#include "remote_copy_l2.h"
#include "simfa/plugin.h"
#include "unified_l2.h"

SIMFA_PLUGIN("simfa_l2",
             simfa::component_info<simfa::memory_models::UnifiedL2>(
                 "l2.unified", "1.0.0",
                 "sliced set-associative LRU L2, write-back, MSHRs per slice, slice bandwidth"),
             simfa::component_info<simfa::memory_models::RemoteCopyL2>(
                 "l2.remote_copy", "1.0.0",
                 "two-partition L2: far requests pay a crossing and may leave near shadow copies"))
