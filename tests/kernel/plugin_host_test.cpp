// The plugin host against the test plugins of tests/kernel/test_plugins: loading, refusal of
// broken libraries with their causes, component creation, and the description formats.
#include "kernel/plugin_host.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel/describe.h"
#include "kernel/manifest.h"
#include "kernel/simulation.h"
#include "kernel/stats_registry.h"
#include "kernel/workload_spec.h"
#include "simfa/core.h"

namespace simfa::kernel {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kPlugins = SIMFA_TEST_PLUGIN_DIR;
const fs::path kGood = kPlugins / "good" / "libsimfa_test_good.so";
const fs::path kDup = kPlugins / "dup" / "libsimfa_test_dup.so";
const fs::path kFutureAbi = kPlugins / "bad" / "libsimfa_test_future_abi.so";
const fs::path kNotAPlugin = kPlugins / "bad" / "libsimfa_test_not_a_plugin.so";
const fs::path kUnresolved = kPlugins / "bad" / "libsimfa_test_unresolved.so";

// The message of the InputError `f` throws, or a failure when it throws none.
template <typename F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError thrown";
  return {};
}

// Events in (cycle, priority, insertion) order, run on demand.
class ManualEventQueue final : public EventQueue {
 public:
  Cycle now() const override { return now_; }
  EventId schedule(Cycle when, EventTarget& target, std::uint64_t payload,
                   Priority priority) override {
    const std::uint64_t seq = next_seq_++;
    pending_.emplace(Key{when, priority, seq}, Pending{&target, payload});
    return EventId{seq};
  }
  bool cancel(EventId id) override {
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      if (std::get<2>(it->first) == id.seq) {
        pending_.erase(it);
        return true;
      }
    }
    return false;
  }
  void run() {
    while (!pending_.empty()) {
      auto it = pending_.begin();
      const auto [when, priority, seq] = it->first;
      const Pending event = it->second;
      pending_.erase(it);
      now_ = when;
      event.target->on_event(when, event.payload);
    }
  }

 private:
  using Key = std::tuple<Cycle, Priority, std::uint64_t>;
  struct Pending {
    EventTarget* target;
    std::uint64_t payload;
  };
  std::map<Key, Pending> pending_;
  std::uint64_t next_seq_ = 0;
  Cycle now_ = 0;
};

// Everything a factory needs, with the schema's defaults expanded and `overrides` applied
// as if set at line 3 of "test.toml".
class Harness {
 public:
  Harness(const CatalogEntry& entry, const std::map<std::string, ParamValue>& overrides)
      : schema_(&entry.schema) {
    std::vector<Params::Entry> values;
    for (const auto& spec : entry.schema.params()) {
      Params::Entry e;
      e.name = spec.name;
      if (auto it = overrides.find(spec.name); it != overrides.end()) {
        e.value = it->second;
        e.where = location(3, 1);
      } else if (spec.default_value) {
        e.value = *spec.default_value;
      } else {
        ADD_FAILURE() << "no value for required parameter " << spec.name;
      }
      values.push_back(std::move(e));
    }
    params_ = Params("probe", location(2, 1), std::move(values));
  }

  BuildContext context() {
    return BuildContext{params_, events_, StatsScope(stats_, "probe", schema_), gpu_, 7, -1};
  }
  ManualEventQueue& events() { return events_; }
  StatsRegistryImpl& stats() { return stats_; }

 private:
  static SourceLocation location(std::uint32_t line, std::uint32_t column) {
    SourceLocation where;
    where.file = "test.toml";
    where.line = line;
    where.column = column;
    return where;
  }

  const Schema* schema_;
  Params params_;
  ManualEventQueue events_;
  StatsRegistryImpl stats_;
  GpuConfig gpu_;
};

// A directory under the system temp dir, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir()
      : path_(fs::temp_directory_path() /
              ("simfa_plugin_host_test." + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::vector<std::string> names(const SchemaCatalog& catalog) {
  std::vector<std::string> out;
  for (const CatalogEntry* e : catalog.entries()) out.push_back(e->name);
  return out;
}

TEST(PluginHost, LoadsNothingUntilAsked) {
  PluginHost host;
  EXPECT_TRUE(host.entries().empty());
  EXPECT_TRUE(host.errors().empty());
  EXPECT_EQ(host.find("probe.counter"), nullptr);
}

TEST(PluginHost, SearchPathIsManifestThenEnvironmentThenBesideTheExecutable) {
  ::setenv("SIMFA_PLUGIN_PATH", "/env/a::/env/b:", 1);
  const auto dirs = PluginHost::search_path({"/manifest/one", "relative/two"});
  ::unsetenv("SIMFA_PLUGIN_PATH");
  const std::vector<fs::path> expected{"/manifest/one", "relative/two", "/env/a", "/env/b",
                                       fs::path(SIMFA_PLUGIN_BUILD_DIR).lexically_normal()};
  EXPECT_EQ(dirs, expected);
}

TEST(PluginHost, GoodPluginDescribesItself) {
  PluginHost host;
  EXPECT_EQ(host.instructions().size(), static_cast<std::size_t>(kOpcodeCount));
  host.load_library(kGood);
  EXPECT_EQ(names(host), (std::vector<std::string>{"memory.untallied", "probe.counter",
                                                   "scheduler.test_oldest"}));
  // Its instruction follows Hopper's in the table.
  const InstructionSpec* probe = host.instructions().find("PROBE");
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(static_cast<int>(host.instructions().opcode(*probe)), kOpcodeCount);
  EXPECT_STREQ(probe->engine, "probe");
  EXPECT_EQ(signature(*probe), "PROBE cycles");

  const CatalogEntry* counter = host.find("probe.counter");
  ASSERT_NE(counter, nullptr);
  EXPECT_EQ(counter->kind, "probe");
  EXPECT_EQ(counter->version, "1.0.0");
  EXPECT_EQ(counter->doc, "Counts the ticks of a periodic event.");
  EXPECT_EQ(counter->library_path, fs::canonical(kGood).string());
  const ParamSpec* period = counter->schema.find("period");
  ASSERT_NE(period, nullptr);
  EXPECT_EQ(period->type, ParamType::kInt);
  EXPECT_EQ(period->unit, "cycles");
  EXPECT_EQ(period->default_value, ParamValue{std::int64_t{10}});
  EXPECT_EQ(period->min, 1.0);
  EXPECT_EQ(period->max, 1000.0);
  EXPECT_EQ(counter->schema.find("on_build")->choices.size(), 5u);
  ASSERT_EQ(counter->schema.stats().size(), 2u);
  EXPECT_EQ(counter->schema.stats()[0].name, "fired");

  const CatalogEntry* oldest = host.find("scheduler.test_oldest");
  ASSERT_NE(oldest, nullptr);
  EXPECT_EQ(oldest->kind, "scheduler");
  EXPECT_FALSE(oldest->schema.find("weight")->default_value.has_value());
  EXPECT_EQ(oldest->schema.find("buffer")->type, ParamType::kSize);
  ASSERT_EQ(oldest->schema.slots().size(), 1u);
  EXPECT_EQ(oldest->schema.slots()[0].kind, "scheduler");
  ASSERT_EQ(oldest->schema.stats().size(), 3u);
  EXPECT_EQ(oldest->schema.stats()[2].kind, StatKind::kFormula);
  EXPECT_TRUE(host.errors().empty());
}

TEST(PluginHost, CreateBuildsAWorkingComponent) {
  PluginHost host;
  host.load_library(kGood);
  const CatalogEntry& counter = *host.find("probe.counter");
  Harness h(counter, {{"period", std::int64_t{7}}, {"ticks", std::int64_t{4}}});
  {
    const auto component = host.create(counter, h.context());
    ASSERT_NE(component, nullptr);
    h.events().run();
    component->finish(h.events().now());
  }
  // Ticks at 7, 14, 21, 28.
  EXPECT_EQ(h.stats().find_counter("probe.fired")->value(), 4u);
  EXPECT_EQ(h.stats().find_counter("probe.last_tick")->value(), 28u);

  const CatalogEntry& oldest = *host.find("scheduler.test_oldest");
  Harness p(oldest, {{"weight", 0.5}});
  const auto policy = host.create(oldest, p.context());
  auto* scheduler = dynamic_cast<WarpSchedulerPolicy*>(policy.get());
  ASSERT_NE(scheduler, nullptr);
  const IssueCandidate ready[] = {{0, 9}, {1, 3}, {2, 5}};
  EXPECT_EQ(scheduler->pick(ready), 1u);
  EXPECT_EQ(p.stats().find_counter("probe.picks")->value(), 1u);
}

TEST(PluginHost, CreateTurnsPluginInputErrorsIntoInputErrorsNamingThePlugin) {
  PluginHost host;
  host.load_library(kGood);
  const CatalogEntry& counter = *host.find("probe.counter");
  Harness h(counter, {{"on_build", std::string("throw_input")}, {"period", std::int64_t{10}}});
  const std::string what = input_error_of([&] { host.create(counter, h.context()); });
  // Points at the key the plugin blamed (set at line 3), tagged with the plugin.
  EXPECT_EQ(what,
            "test.toml:3:1: error: [probe] period must divide 1000 [plugin probe.counter 1.0.0]");
}

TEST(PluginHost, CreateTurnsOtherPluginExceptionsIntoErrorsNamingThePlugin) {
  PluginHost host;
  host.load_library(kGood);
  const CatalogEntry& counter = *host.find("probe.counter");
  for (const auto& [mode, expected] : std::map<std::string, std::string>{
           {"throw_std", "error: [probe] probe exploded [plugin probe.counter 1.0.0]"},
           {"throw_unknown",
            "error: [probe] unknown exception while building the component [plugin probe.counter "
            "1.0.0]"},
           // A statistic is bound by the name its schema declares, or not at all.
           {"bind_undeclared",
            "internal: statistic 'probe.misfired' is bound but not declared: the component's "
            "schema has no counter 'misfired' (Schema::stat in describe()) [plugin probe.counter "
            "1.0.0]"}}) {
    Harness h(counter, {{"on_build", mode}});
    try {
      host.create(counter, h.context());
      ADD_FAILURE() << mode << ": no exception";
    } catch (const InputError& e) {
      ADD_FAILURE() << mode << ": not an input error: " << e.what();
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), expected) << mode;
    }
  }
}

TEST(PluginHost, ASimulationRefusesAMemoryThatReportsNoByteTotals) {
  PluginHost host;
  host.load_directories({SIMFA_PLUGIN_BUILD_DIR});
  host.load_library(kGood);
  const Manifest m = resolve_manifest(
      read_manifest(SIMFA_SOURCE_DIR "/configs/h800.toml", {{"memory.plugin", "memory.untallied"}}),
      host);
  const ComponentConfig w = parse_workload_spec("gemm:m=128,n=128,k=64", host);
  try {
    Simulation sim(m, w, host, RunOptions{});
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "the memory plugin memory.untallied reports no byte totals (MemoryPort::traffic), "
              "which every memory plugin must (docs/stats.md)");
  }
}

// Simulation::work sums what the SMs report (SmCore::work): their issued instructions and their
// TMA engines' line requests, the statistics sm[i].issued_instructions and sm[i].tma.lines.
TEST(Simulation, WorkIsTheSmsInstructionsAndLineRequests) {
  PluginHost host;
  host.load_directories({SIMFA_PLUGIN_BUILD_DIR});
  const ComponentConfig w = parse_workload_spec("gemm:m=256,n=256,k=128", host);
  for (const char* tma : {"tma.traffic", "tma.fixed"}) {
    SCOPED_TRACE(tma);
    const Manifest m = resolve_manifest(
        read_manifest(SIMFA_SOURCE_DIR "/configs/h800.toml", {{"sm.tma.plugin", tma}}), host);
    Simulation sim(m, w, host, RunOptions{});
    sim.run();
    std::uint64_t instructions = 0, lines = 0;
    for (int i = 0; i < m.gpu.sm_count; ++i) {
      const std::string sm = "sm[" + std::to_string(i) + "].";
      instructions += sim.stats().find_counter(sm + "issued_instructions")->value();
      if (const Counter* c = sim.stats().find_counter(sm + "tma.lines")) lines += c->value();
    }
    const SmWork work = sim.work();
    EXPECT_GT(work.instructions, 0u);
    EXPECT_EQ(work.instructions, instructions);
    EXPECT_EQ(work.line_requests, lines);
    EXPECT_EQ(work.line_requests > 0, std::string(tma) == "tma.traffic");
  }
}

TEST(PluginHost, CreateRefusesAnEntryFromElsewhere) {
  PluginHost host;
  host.load_library(kGood);
  CatalogEntry copy = *host.find("probe.counter");
  Harness h(copy, {});
  EXPECT_THROW(host.create(copy, h.context()), Error);
}

TEST(PluginHost, RefusesAnotherAbiNamingBothVersions) {
  PluginHost host;
  const std::string what = input_error_of([&] { host.load_library(kFutureAbi); });
  EXPECT_THAT(what, HasSubstr(kFutureAbi.string()));
  EXPECT_THAT(what, HasSubstr("built for sdk ABI " +
                              std::to_string(kSdkAbiVersion + SIMFA_TEST_ABI_OFFSET) +
                              ", this simfa has ABI " + std::to_string(kSdkAbiVersion)));
  EXPECT_TRUE(host.entries().empty());
}

TEST(PluginHost, RefusesAnUnresolvedSymbolWithTheLoadersMessage) {
  PluginHost host;
  const std::string what = input_error_of([&] { host.load_library(kUnresolved); });
  EXPECT_THAT(what, HasSubstr(kUnresolved.string()));
  EXPECT_THAT(what, HasSubstr("undefined symbol: simfa_test_symbol_nobody_defines"));
  EXPECT_THAT(what, Not(HasSubstr("boost::dll")));
}

TEST(PluginHost, RefusesAMissingPath) {
  PluginHost host;
  const fs::path missing = kPlugins / "nowhere" / "libabsent.so";
  EXPECT_EQ(input_error_of([&] { host.load_library(missing); }),
            missing.string() + ": error: no such file");
}

TEST(PluginHost, RefusesAFileWithoutReadPermission) {
  TempDir dir;
  const fs::path copy = dir.path() / "libsimfa_locked.so";
  fs::copy_file(kGood, copy);
  fs::permissions(copy, fs::perms::none);
  if (std::ifstream(copy).good()) GTEST_SKIP() << "running with permission to read mode-000 files";
  PluginHost host;
  EXPECT_EQ(input_error_of([&] { host.load_library(copy); }),
            copy.string() + ": error: cannot read (Permission denied)");
}

TEST(PluginHost, RefusesWhatIsNotARegularFile) {
  TempDir dir;
  const fs::path fifo = dir.path() / "libsimfa_fifo.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path folder = dir.path() / "libsimfa_folder.so";
  fs::create_directory(folder);
  PluginHost host;
  EXPECT_EQ(input_error_of([&] { host.load_library(fifo); }),
            fifo.string() + ": error: cannot read (not a regular file)");
  EXPECT_EQ(input_error_of([&] { host.load_library(folder); }),
            folder.string() + ": error: cannot read (is a directory)");
}

TEST(PluginHost, RefusesALibraryWithoutTheDescriptor) {
  PluginHost host;
  EXPECT_EQ(input_error_of([&] { host.load_library(kNotAPlugin); }),
            kNotAPlugin.string() + ": error: not a simfa plugin (no simfa_plugin_descriptor)");
}

TEST(PluginHost, RefusesAComponentNameWithoutKind) {
  PluginHost host;
  const fs::path lib = kPlugins / "invalid" / "libsimfa_test_invalid_name.so";
  EXPECT_EQ(input_error_of([&] { host.load_library(lib); }),
            lib.string() +
                ": error: invalid component name 'Unified' (expected kind.impl in lowercase "
                "letters, digits and '_', e.g. l2.unified)");
  EXPECT_TRUE(host.entries().empty());
}

TEST(PluginHost, LoadDirectoriesCollectsFailuresAndKeepsGoing) {
  PluginHost host;
  host.load_directories({kPlugins / "bad", kPlugins / "does-not-exist", kPlugins / "good"});
  EXPECT_EQ(names(host), (std::vector<std::string>{"memory.untallied", "probe.counter",
                                                   "scheduler.test_oldest"}));
  // One per broken library, in file-name order.
  ASSERT_EQ(host.errors().size(), 3u);
  EXPECT_THAT(host.errors()[0], HasSubstr(kFutureAbi.string() + ": built for sdk ABI"));
  EXPECT_EQ(host.errors()[1],
            kNotAPlugin.string() + ": not a simfa plugin (no simfa_plugin_descriptor)");
  EXPECT_THAT(host.errors()[2], HasSubstr(kUnresolved.string() + ": undefined symbol"));
}

TEST(PluginHost, DuplicateNameRejectsTheLaterLibraryWhole) {
  PluginHost host;
  host.load_directories({kPlugins / "good", kPlugins / "dup"});
  ASSERT_EQ(host.errors().size(), 1u);
  EXPECT_EQ(host.errors()[0], kDup.string() +
                                  ": component 'probe.counter' is already provided by " +
                                  fs::canonical(kGood).string());
  EXPECT_EQ(host.find("probe.counter")->library_path, fs::canonical(kGood).string());
  EXPECT_EQ(host.find("probe.only_in_dup"), nullptr);
}

TEST(PluginHost, TheSameLibraryTwiceLoadsOnce) {
  PluginHost host;
  host.load_library(kGood);
  host.load_library(kPlugins / "good" / ".." / "good" / "libsimfa_test_good.so");
  host.load_directories({kPlugins / "good"});
  EXPECT_TRUE(host.errors().empty());
  EXPECT_EQ(host.entries().size(), 3u);
}

TEST(Describe, ShowsEveryParameterWithItsMetadata) {
  PluginHost host;
  host.load_library(kGood);
  const std::string counter = format_describe(*host.find("probe.counter"));
  EXPECT_THAT(counter, HasSubstr("probe.counter 1.0.0 (kind probe)\n"
                                 "  Counts the ticks of a periodic event.\n"
                                 "  library: " +
                                 fs::canonical(kGood).string() + "\n"));
  EXPECT_THAT(
      counter,
      HasSubstr("parameters:\n"
                "  NAME      TYPE    UNIT    DEFAULT  ALLOWED                                "
                "                                DESCRIPTION\n"
                "  period    int     cycles  10       1 .. 1000                              "
                "                                Cycles between two ticks.\n"
                "  ticks     int             3        >= 1                                   "
                "                                Ticks before it stops.\n"
                "  on_build  string          \"build\"  one of: build, throw_std, "
                "throw_input, throw_unknown, bind_undeclared  What the factory does"));
  EXPECT_THAT(counter, HasSubstr("statistics:\n  NAME       KIND     UNIT    DESCRIPTION\n"
                                 "  fired      counter  events  Ticks so far.\n"));

  const std::string oldest = format_describe(*host.find("scheduler.test_oldest"));
  EXPECT_THAT(oldest, HasSubstr("  weight   float             required"));
  EXPECT_THAT(oldest, HasSubstr("  verbose  bool              false"));
  EXPECT_THAT(oldest, HasSubstr("  buffer   size       bytes  4096 (4KiB) "));
  EXPECT_THAT(oldest, HasSubstr("  clock    frequency  MHz    1830 "));
  EXPECT_THAT(oldest, HasSubstr("  drain    bandwidth  B/s    3350000000000 (3.35TB/s)"));
  EXPECT_THAT(oldest, HasSubstr("slots:\n  NAME      KIND       DESCRIPTION\n"
                                "  fallback  scheduler  Consulted when"));
  EXPECT_THAT(oldest, HasSubstr("  ready       histogram  WarpGroups  Ready WarpGroups per pick."));
}

TEST(Describe, PluginListHasOneRowPerComponent) {
  PluginHost host;
  EXPECT_EQ(format_plugin_list(host), "no plugin components found\n");
  host.load_library(kGood);
  const std::string lib = fs::canonical(kGood).string();
  EXPECT_EQ(format_plugin_list(host),
            "NAME                   VERSION  KIND       LIBRARY\n"
            "memory.untallied       1.0.0    memory     " +
                lib +
                "\n"
                "probe.counter          1.0.0    probe      " +
                lib +
                "\n"
                "scheduler.test_oldest  0.2.1    scheduler  " +
                lib + "\n");
}

TEST(Describe, ReferenceMarkdownIsGroupedByKindWithoutPaths) {
  PluginHost host;
  host.load_library(kGood);
  const std::string md = format_reference_markdown(host);
  EXPECT_THAT(md, HasSubstr("# Manifest reference\n"));
  EXPECT_THAT(md, HasSubstr("\n## Kind `probe`\n\n### `probe.counter` 1.0.0\n\n"
                            "Counts the ticks of a periodic event.\n"));
  EXPECT_THAT(
      md,
      HasSubstr("| Parameter | Type | Unit | Default | Allowed | Description |\n"
                "| --- | --- | --- | --- | --- | --- |\n"
                "| `period` | int | cycles | `10` | 1 .. 1000 | Cycles between two ticks. |\n"));
  EXPECT_THAT(md, HasSubstr("| `weight` | float |  | *required* |  |"));
  EXPECT_THAT(md, HasSubstr("| `buffer` | size | bytes | `4096 (4KiB)` |"));
  EXPECT_THAT(md, HasSubstr("| `drain` | bandwidth | B/s | `3350000000000 (3.35TB/s)` |"));
  EXPECT_THAT(md, HasSubstr("Drain rate \\| with a pipe."));
  EXPECT_THAT(md, HasSubstr("| `fallback` | `scheduler` | Consulted when"));
  EXPECT_THAT(md, HasSubstr("| `mean_ready` | formula | WarpGroups | Mean ready per pick. |"));
  EXPECT_LT(md.find("## Kind `probe`"), md.find("## Kind `scheduler`"));
  EXPECT_EQ(md.find(kPlugins.string()), std::string::npos);
}

}  // namespace
}  // namespace simfa::kernel
