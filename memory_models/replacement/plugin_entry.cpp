// The simfa_replacement plugin: the L2 replacement policies (kind "replacement").
#include "lru_replacement.h"
#include "simfa/plugin.h"
#include "srrip_replacement.h"

SIMFA_PLUGIN("simfa_replacement",
             simfa::component_info<simfa::memory_models::LruReplacement>(
                 "replacement.lru", "1.0.0",
                 "least recently used: the way hit or filled longest ago is evicted"),
             simfa::component_info<simfa::memory_models::SrripReplacement>(
                 "replacement.srrip", "1.0.0",
                 "static re-reference interval prediction (Jaleel et al., ISCA 2010), "
                 "hit priority: scan-resistant"))
