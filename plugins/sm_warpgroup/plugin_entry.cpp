// The simfa-sm plugin library: the WarpGroup-level SM core model.
#include "simfa/plugin.h"
#include "sm_warpgroup.h"

SIMFA_PLUGIN("simfa-sm",
             simfa::component_info<simfa::sm_warpgroup::WarpGroupSm>(
                 "sm.warpgroup", "1.0.0",
                 "Hopper SM at WarpGroup granularity: CTA admission, one issue per cycle, "
                 "mbarrier stages, named barriers, WGMMA groups (paper section IV-B)"))
