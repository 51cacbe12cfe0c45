// The simfa_slice plugin: the L2 slice maps (kind "slice").
#include "fold_slice_map.h"
#include "linear_slice_map.h"
#include "simfa/plugin.h"
#include "xor_slice_map.h"

SIMFA_PLUGIN("simfa_slice",
             simfa::component_info<simfa::memory_models::LinearSliceMap>(
                 "slice.linear", "1.0.0", "slice = line mod N (the low bits of the line index)"),
             simfa::component_info<simfa::memory_models::XorSliceMap>(
                 "slice.xor", "1.0.0", "slice = (line ^ (line >> 5)) mod N (Sim-FA's XOR hash)"),
             simfa::component_info<simfa::memory_models::FoldSliceMap>(
                 "slice.fold", "1.0.0",
                 "slice = (line ^ line >> s ^ line >> 2s ^ ...) mod N (every bit folded)"))
