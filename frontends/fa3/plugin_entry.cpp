// The simfa-frontend-fa3 plugin: FlashAttention-3 forward passes from a shape or from event logs.
#include "fa3_sources.h"
#include "simfa/plugin.h"

SIMFA_PLUGIN("simfa-frontend-fa3",
             simfa::component_info<simfa::fa3::Fa3Source>(
                 "workload.fa3", "1.0.0",
                 "FlashAttention-3 forward pass: FA3's event stream generated for a shape and "
                 "translated (docs/workloads.md)"),
             simfa::component_info<simfa::fa3::Fa3EventsSource>(
                 "workload.fa3_events", "1.0.0",
                 "FlashAttention-3 event log (CSV) of an instrumented kernel or of gen.fa3, "
                 "translated by the paper's section VI-B"),
             simfa::component_info<simfa::fa3::Fa3Generator>(
                 "gen.fa3", "1.0.0",
                 "writes the per-warp event log an instrumented FlashAttention-3 kernel records"))
