// A component's statistics come from its schema alone (issue 14, item 5): in real runs of every
// shipped plugin, each statistic a component's schema declares is in the stats file, and each
// statistic in the stats file is one its component declares.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "apps/loaded_manifest.h"
#include "simfa/stats.h"

namespace simfa {
namespace {

namespace json = boost::json;

// Statistics a component binds only in some runs, with the reason.
const std::map<std::string, std::set<std::string>> kConditional = {
    // Only where a plugin's engine is wired into [sm] (tests/plugins/sm_warpgroup_test.cpp).
    {"sm.warpgroup", {"stall.engine"}},
};

// The keys stats_json writes beside the registry's statistics (docs/stats.md).
const std::set<std::string> kNotStatistics = {
    "simfa", "manifest", "manifest_sha256", "seed", "workload", "kernel", "sim"};
// The stats contract's byte totals, which stats_json writes from MemoryPort::traffic.
const std::set<std::string> kTraffic = {"memory.llc_read_bytes", "memory.llc_write_bytes",
                                        "memory.dram_read_bytes", "memory.dram_write_bytes"};

// The dotted path of every statistic in `node` (a histogram is one statistic).
void leaves(const json::object& node, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, value] : node) {
    const std::string path = prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
    if (value.is_object() && !value.as_object().contains("buckets"))
      leaves(value.as_object(), path, out);
    else
      out.push_back(path);
  }
}

// The stats path of the component in `slot`, on SM 0 for the SM's ("sm.tma" -> "sm[0].tma").
std::string path_of(const std::string& slot) {
  if (slot == "sm" || slot.starts_with("sm.")) return "sm[0]" + slot.substr(2);
  return slot;
}

struct Case {
  const char* manifest;
  std::vector<std::string> sets;
};

void check(const Case& c) {
  SCOPED_TRACE(c.manifest);
  apps::LoadedManifest loaded;
  apps::load(loaded, std::string(SIMFA_SOURCE_DIR) + "/" + c.manifest, c.sets);
  const auto run = apps::run_for_stats(loaded, "gemm:m=256,n=256,k=256", {});
  std::vector<std::string> stats;
  for (const auto& [key, value] : run.stats)
    if (!kNotStatistics.contains(std::string(key)) && value.is_object())
      leaves(value.as_object(), std::string(key), stats);
  for (const std::string& t : kTraffic)
    EXPECT_EQ(std::erase(stats, t), 1u) << t << " is not in the stats file once";

  // Each component's statistics, relative to its path, SM 0's for the SMs'.
  std::map<std::string, std::vector<std::string>> bound;  // by component path
  for (const std::string& s : stats) {
    const std::string on_sm0 = s.starts_with("sm[") ? "sm[0]" + s.substr(s.find(']') + 1) : s;
    // The deepest component whose path holds the statistic.
    const kernel::ComponentConfig* owner = nullptr;
    for (const auto& component : loaded.manifest.components) {
      const std::string path = path_of(component.slot);
      if (on_sm0.starts_with(path + ".") && (!owner || path.size() > path_of(owner->slot).size()))
        owner = &component;
    }
    ASSERT_NE(owner, nullptr) << s << ": no component holds it";
    bound[path_of(owner->slot)].push_back(on_sm0.substr(path_of(owner->slot).size() + 1));
  }

  for (const auto& component : loaded.manifest.components) {
    const std::string path = path_of(component.slot);
    const std::vector<StatSpec>& declared = component.entry->schema.stats();
    const std::vector<std::string>& own = bound[path];
    for (const std::string& name : own) {
      const bool found = std::any_of(declared.begin(), declared.end(), [&](const StatSpec& d) {
        return declared_stat_names(d.name, name);
      });
      EXPECT_TRUE(found) << path << "." << name << " is not declared by " << component.plugin;
    }
    const auto conditional = kConditional.find(component.plugin);
    for (const StatSpec& d : declared) {
      if (conditional != kConditional.end() && conditional->second.contains(d.name)) continue;
      const bool found = std::any_of(own.begin(), own.end(), [&](const std::string& name) {
        return declared_stat_names(d.name, name);
      });
      EXPECT_TRUE(found) << component.plugin << " declares " << d.name << " but " << path
                         << " has no such statistic";
    }
  }
}

TEST(DeclaredStatistics, AreTheStatisticsOfEveryShippedPlugin) {
  const Case cases[] = {
      {"configs/h800.toml", {}},
      {"configs/h200.toml", {}},
      {"configs/ablations/unified_l2.toml", {"memory.l2.replacement.plugin=replacement.srrip"}},
      {"configs/ablations/fixed_dram.toml", {}},
      {"configs/ablations/no_lrc.toml", {}},
      {"configs/h800.toml",
       {"sm.tma.plugin=tma.fixed", "sm.scheduler.plugin=scheduler.lrr",
        "dispatch.plugin=dispatch.fill"}},
      {"configs/h800.toml", {"sm.scheduler.plugin=scheduler.oldest", "memory.plugin=memory.ideal"}},
  };
  for (const Case& c : cases) check(c);
}

}  // namespace
}  // namespace simfa
