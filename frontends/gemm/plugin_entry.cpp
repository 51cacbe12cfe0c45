// The simfa-frontend-gemm plugin: TMA + WGMMA GEMM programs generated from their shape.
#include "gemm_source.h"
#include "simfa/plugin.h"

SIMFA_PLUGIN("simfa-frontend-gemm",
             simfa::component_info<simfa::gemm::GemmSource>(
                 "workload.gemm", "1.0.0",
                 "TMA + WGMMA GEMM: one CTA per output tile, a k-tile ring, real addresses "
                 "(docs/workloads.md)"))
