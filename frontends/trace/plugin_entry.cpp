// The simfa-frontend-trace plugin: workloads written in the native trace format.
#include "simfa/plugin.h"
#include "trace_source.h"

SIMFA_PLUGIN(
    "simfa-frontend-trace",
    simfa::component_info<simfa::trace::TraceSource>(
        "workload.trace", "1.0.0",
        "native text trace: TensorMaps, a grid and one CTA body template (docs/trace-format.md)"))
