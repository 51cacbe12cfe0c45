// The simfa-frontend-ttgir plugin: Triton kernels from their TTGIR, statically or through a
// Proton trace of the instrumented kernel.
#include "simfa/plugin.h"
#include "ttgir_source.h"

SIMFA_PLUGIN("simfa-frontend-ttgir",
             simfa::component_info<simfa::ttgir::TtgirSource>(
                 "workload.ttgir", "1.0.0",
                 "Triton TTGIR: static lowering (file=) or a Proton trace of the instrumented "
                 "kernel (trace=, ttgir=) into per-CTA programs (docs/ttgir.md)"))
