// The plugin descriptor: what a plugin library exports, and the macro that exports it.
//
// A library exports exactly one symbol, the Boost.DLL alias `simfa_plugin_descriptor`, a function
// returning a pointer to a PluginDescriptor. The host reads `abi_version` first and touches
// nothing else of a library built for another ABI.
#pragma once

#include <boost/dll/alias.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "simfa/component.h"
#include "simfa/instruction_set.h"
#include "simfa/params.h"

namespace simfa {

/// Bumped on any change to an sdk type that crosses the plugin boundary.
/// 4: optional sub-slots (SlotSpec::default_plugin) and the kind "replacement".
/// 6: TensorCoreEngine::busy_until (the SM's pipes beside a running tensor core).
/// 7: MemoryPort::accepts_bursts and send_burst (lines booked ahead, docs/performance.md §10).
/// 8: MemClient::prefetch_response (a response's host memory fetched ahead, docs/performance.md
///    §11).
/// 9: the instruction table (simfa/instruction_set.h): PluginDescriptor::instructions and
///    BuildContext::instructions.
/// 10: StatsScope knows its component's schema: statistics bound by name (item 5 of issue 14).
/// 11: the SM is a composite (item 1 of issue 14): its engines (scheduler, TMA, tensor core)
///     are sub-slots its plugin declares, built by the kernel and handed to it in
///     BuildContext::slots; SmWiring keeps the kernel's services alone.
/// 12: engines for plugins' instructions: Schema::engine_slots, SlotResolver::find and the kind
///     InstructionEngine (EngineOp, EngineClient), through which sm.warpgroup runs them.
/// 13: InstructionSpec's spans are SpanSpecs (name, Gantt colour and label) and it declares its
///     flight span: the Gantt chart takes its span kinds from the table (item 2 of issue 14).
/// 14: engines report their use through the sdk (item 5 of issue 14): TmaEngine::busy_cycles
///     and issued_bytes, TensorCoreEngine::busy_cycles, InstructionEngine::busy_cycles, and
///     SmCore::meters (SmMeter), which the run summary and the counter tracks read.
/// 15: statistics come from the schema alone (item 5 of issue 14): StatsScope binds by the
///     declared name only ("[i]" and "<...>" in a declared name stand for an index and a name
///     part), its child scopes too; the overloads taking a unit and doc are gone.
/// 16: the kernel reads the SMs' stalls and the L2's hits through the sdk, not by counter names
///     (item 5 of issue 14): SmMeter::kStall (the summary's stall line) and
///     MemoryPort::cache_use (the timeline's L2 hit rate, simfa ablate's).
/// 17: EngineClient::on_engine_flight: a plugin's engine draws its instructions' flight spans.
/// 18: WgmmaOp::warpgroup, the issuing WarpGroup (a tensor core serving WarpGroups in turn).
/// 19: the memory's byte totals through the sdk, not by counter names (item 5 of issue 14):
///     MemoryPort::traffic (MemoryTraffic), which every memory plugin answers and the kernel
///     writes into the stats file and reads for the summary, the bandwidth tracks and simfa
///     ablate; L2Cache::llc_bytes and DramBackend::dram_bytes, the hierarchy's parts of it.
/// 20: SpanSpec::what: a flight span's row in the Gantt chart's note under the legend, which the
///     chart writes from the instruction table instead of naming Hopper's rows.
/// 21: SmCore::work (SmWork) and TmaEngine::line_requests: the instructions an SM issued and the
///     line requests its TMA sent, which simulation_bench read by counter names.
/// 22: InstructionSpec::copy: the Gantt chart takes a lane's producer role from the table, not
///     from the engine kind "tma".
/// 23: MemoryPort::runs_steps / defer_step: a port runs the steps its clients defer to it.
/// 24: MemoryPort::fixed_latency / send_counted: the client of a fixed-latency port times its
///     lines itself and has them counted (docs/performance.md §20).
inline constexpr std::uint32_t kSdkAbiVersion = 24;

struct ComponentInfo {
  const char* name;     ///< "kind.impl", e.g. "l2.unified"; kind selects the slots it may fill
  const char* version;  ///< semantic version of the implementation
  const char* doc;      ///< one line
  void (*describe)(Schema& schema);
  std::unique_ptr<Component> (*create)(const BuildContext& context);
};

struct PluginDescriptor {
  std::uint32_t abi_version;  ///< must stay the first member
  const char* library;        ///< human-readable library name
  const ComponentInfo* components;
  std::size_t component_count;
  /// The instructions the library adds to the instruction table (none: null and 0).
  const InstructionSpec* instructions;
  std::size_t instruction_count;
};

using PluginEntry = const PluginDescriptor*();

/// ComponentInfo for a class with `static void describe(Schema&)` and a constructor taking
/// `const BuildContext&`.
template <typename T>
constexpr ComponentInfo component_info(const char* name, const char* version, const char* doc) {
  return ComponentInfo{
      name, version, doc, &T::describe,
      [](const BuildContext& c) -> std::unique_ptr<Component> { return std::make_unique<T>(c); }};
}

}  // namespace simfa

/// Export a library's components: SIMFA_PLUGIN("simfa-core", info1, info2, ...).
#define SIMFA_PLUGIN(LIBRARY_NAME, ...) \
  SIMFA_PLUGIN_DESCRIPTOR_(LIBRARY_NAME, nullptr, 0, __VA_ARGS__)

/// Export a library's components and the instructions it adds to the instruction table:
/// SIMFA_PLUGIN_WITH_INSTRUCTIONS("my-engines", kInstructions, info1, ...), where kInstructions
/// is an array of simfa::InstructionSpec at namespace scope (docs/plugin-authors.md).
#define SIMFA_PLUGIN_WITH_INSTRUCTIONS(LIBRARY_NAME, INSTRUCTIONS, ...) \
  SIMFA_PLUGIN_DESCRIPTOR_(LIBRARY_NAME, INSTRUCTIONS,                  \
                           sizeof(INSTRUCTIONS) / sizeof((INSTRUCTIONS)[0]), __VA_ARGS__)

#define SIMFA_PLUGIN_DESCRIPTOR_(LIBRARY_NAME, INSTRUCTIONS, INSTRUCTION_COUNT, ...) \
  namespace {                                                                       \
  const ::simfa::ComponentInfo simfa_plugin_components_[] = {__VA_ARGS__};          \
  const ::simfa::PluginDescriptor simfa_plugin_descriptor_value_{                   \
      ::simfa::kSdkAbiVersion,                                                      \
      LIBRARY_NAME,                                                                 \
      simfa_plugin_components_,                                                     \
      sizeof(simfa_plugin_components_) / sizeof(simfa_plugin_components_[0]),       \
      INSTRUCTIONS,                                                                 \
      INSTRUCTION_COUNT};                                                           \
  const ::simfa::PluginDescriptor* simfa_plugin_entry_() {                          \
    return &simfa_plugin_descriptor_value_;                                         \
  }                                                                                 \
  }                                                                                 \
  BOOST_DLL_ALIAS(simfa_plugin_entry_, simfa_plugin_descriptor)
