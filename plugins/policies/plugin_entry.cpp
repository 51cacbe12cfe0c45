// The simfa_policies plugin: warp-scheduler and CTA-dispatch policies.
#include "simfa/plugin.h"

#include "cta_dispatchers.h"
#include "warp_schedulers.h"

using simfa::component_info;
using namespace simfa::policies;

SIMFA_PLUGIN("simfa_policies",
             component_info<GtoScheduler>(
                 "scheduler.gto", "1.0.0",
                 "greedy-then-oldest: the last-issued WarpGroup while ready, else the oldest"),
             component_info<LrrScheduler>(
                 "scheduler.lrr", "1.0.0",
                 "loose round-robin: the first ready WarpGroup after the last issued, by slot"),
             component_info<OldestScheduler>("scheduler.oldest", "1.0.0",
                                             "oldest-first: the ready WarpGroup dispatched first"),
             component_info<RoundRobinDispatch>(
                 "dispatch.round_robin", "1.0.0",
                 "the next SM with room after the one chosen last, wrapping"),
             component_info<FillDispatch>("dispatch.fill", "1.0.0",
                                          "the lowest-index SM with room: fills one SM first"))
