// Run by external_plugin_test.cmake after it built examples/external_plugin against the
// installed sdk: the plugin must be found through SIMFA_PLUGIN_PATH, describe itself, and work.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel/describe.h"
#include "kernel/plugin_host.h"
#include "kernel/stats_registry.h"
#include "simfa/core.h"

namespace simfa::kernel {
namespace {

// pick() schedules nothing; the queue only has to exist.
class UnusedEventQueue final : public EventQueue {
 public:
  Cycle now() const override { return 0; }
  EventId schedule(Cycle, EventTarget&, std::uint64_t, Priority) override {
    ADD_FAILURE() << "the policy scheduled an event";
    return {};
  }
  bool cancel(EventId) override { return false; }
};

TEST(ExternalPlugin, LoadsFromThePluginPathAndWorks) {
  const char* external_dir = std::getenv("SIMFA_PLUGIN_PATH");
  ASSERT_NE(external_dir, nullptr) << "run by external_plugin_test.cmake";
  PluginHost host;
  host.load_directories(PluginHost::search_path({}));
  for (const auto& error : host.errors())
    EXPECT_EQ(error.find(external_dir), std::string::npos) << error;

  const CatalogEntry* entry = host.find("scheduler.random_tiebreak");
  ASSERT_NE(entry, nullptr) << format_plugin_list(host);
  EXPECT_EQ(entry->kind, "scheduler");
  EXPECT_EQ(entry->version, "1.0.0");
  EXPECT_EQ(entry->library_path, std::filesystem::canonical(std::filesystem::path(external_dir) /
                                                            "libsimfa_random_tiebreak.so")
                                     .string());
  const std::string description = format_describe(*entry);
  EXPECT_NE(description.find("window"), std::string::npos) << description;
  EXPECT_NE(description.find("1 .. 64"), std::string::npos) << description;
  EXPECT_NE(description.find("younger_picks"), std::string::npos) << description;

  // window = 1 is oldest-first, whatever the random draw.
  SourceLocation where;
  where.file = "external.toml";
  Params params("scheduler", where, {Params::Entry{"window", std::int64_t{1}, where}});
  UnusedEventQueue events;
  StatsRegistryImpl stats;
  GpuConfig gpu;
  // The component's own scope, with its schema: the example binds its statistics by name.
  const StatsScope scope(stats, "scheduler", &entry->schema);
  const auto component = host.create(*entry, BuildContext{params, events, scope, gpu, 1, 0});
  auto* policy = dynamic_cast<WarpSchedulerPolicy*>(component.get());
  ASSERT_NE(policy, nullptr);
  const IssueCandidate ready[] = {{0, 8}, {1, 2}, {2, 5}};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(policy->pick(ready), 1u);
  EXPECT_EQ(stats.find_counter("scheduler.picks")->value(), 4u);
  EXPECT_EQ(stats.find_counter("scheduler.younger_picks")->value(), 0u);
}

}  // namespace
}  // namespace simfa::kernel
