// The manifest loader against a hand-built catalog and the fixtures in data/: every error with
// its exact file:line:col, extends and --set, units, the resolved manifest and its hash; and the
// SHA-256 and did-you-mean it is built on.
#include "kernel/manifest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernel/sha256.h"

namespace simfa::kernel {
namespace {

class TestCatalog final : public SchemaCatalog {
 public:
  TestCatalog() {
    add("sm.warpgroup", [](Schema& s) {
      s.integer("issue_width").def(1).range(1, 4).doc("issue slots");
      s.slot("scheduler", "scheduler", "the warp scheduler");
      s.slot("tma", "tma", "the TMA engine");
      s.slot("tensor_core", "wgmma", "the tensor core");
      s.engine_slots("the engine of a plugin's instructions");
    });
    // An SM with one engine of its own kind and no TMA (an SM plugin declares its engines).
    add("sm.bare", [](Schema& s) {
      s.slot("scheduler", "scheduler", "the warp scheduler");
      s.slot("umma", "umma", "a tensor-memory MMA engine");
    });
    add("umma.demo", [](Schema&) {});
    add("scheduler.gto", [](Schema&) {});
    add("scheduler.lrr", [](Schema&) {});
    add("dispatch.round_robin", [](Schema&) {});
    add("tma.traffic", [](Schema& s) {
      s.integer("setup_cycles").unit("cycles").def(40).min(0).doc("setup latency");
    });
    add("tma.fixed", [](Schema& s) {
      s.integer("latency").unit("cycles").min(1).doc("fixed latency of every TMA operation");
    });
    add("wgmma.half_n",
        [](Schema& s) { s.real("latency_scale").def(1.0).min(0).doc("latency factor"); });
    add("memory.hier", [](Schema& s) {
      s.integer("noc_latency").unit("cycles").def(10).min(0).doc("interconnect latency");
      s.slot("l2", "l2", "the last-level cache");
      s.slot("dram", "dram", "the DRAM backend");
    });
    add("l2.unified", [](Schema& s) {
      s.size("size").min(1).doc("capacity");
      s.integer("assoc").unit("ways").def(16).range(1, 64).doc("associativity");
      s.size("line").def(128).doc("line size");
      s.string("write_policy")
          .def("write_back")
          .choices({"write_back", "write_through"})
          .doc("writes");
      s.slot("slice_map", "slice", "address to slice");
    });
    // An L2 whose replacement sub-slot is optional (the real L2s' shape), and its policies.
    add("l2.studied", [](Schema& s) {
      s.size("size").min(1).doc("capacity");
      s.integer("assoc").unit("ways").def(16).range(1, 64).doc("associativity");
      s.slot("slice_map", "slice", "address to slice");
      s.slot("replacement", "replacement", "the way a fill evicts", "replacement.lru");
    });
    add("replacement.lru", [](Schema&) {});
    add("replacement.srrip",
        [](Schema& s) { s.integer("rrpv_bits").def(2).range(1, 8).doc("RRPV bits"); });
    add("l2.broken_default", [](Schema& s) {
      s.size("size").min(1).doc("capacity");
      s.integer("assoc").unit("ways").def(16).range(1, 64).doc("associativity");
      s.slot("slice_map", "slice", "address to slice");
      s.slot("replacement", "replacement", "the way a fill evicts", "replacement.missing");
    });
    add("slice.xor", [](Schema& s) { s.integer("num_slices").def(80).min(1).doc("slices"); });
    add("slice.linear", [](Schema& s) { s.integer("num_slices").def(80).min(1).doc("slices"); });
    add("dram.switched", [](Schema& s) {
      s.string("refresh").def("auto").choices({"auto", "true", "false"}).doc("a tri-state switch");
      s.string("policy").def("open").choices({"open", "closed"}).doc("no true or false");
    });
    add("dram.fixed", [](Schema& s) {
      s.integer("latency").unit("cycles").def(500).min(0).doc("access latency");
      s.bandwidth("bandwidth").def(3.35e12).doc("peak bandwidth");
    });
  }

  const CatalogEntry* find(std::string_view name) const override {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  std::vector<const CatalogEntry*> entries() const override {
    std::vector<const CatalogEntry*> out;
    for (const auto& [name, entry] : entries_) out.push_back(&entry);
    return out;
  }
  /// As if a loaded library added instructions run by an engine of kind "umma".
  std::vector<std::string> engine_kinds() const override {
    return with_umma_instructions ? std::vector<std::string>{"tma", "wgmma", "umma"}
                                  : std::vector<std::string>{"tma", "wgmma"};
  }
  bool with_umma_instructions = false;

 private:
  void add(const std::string& name, const std::function<void(Schema&)>& describe) {
    CatalogEntry& e = entries_[name];
    e.name = name;
    e.kind = name.substr(0, name.find('.'));
    e.version = "1.0.0";
    describe(e.schema);
  }
  std::map<std::string, CatalogEntry, std::less<>> entries_;
};

const std::string kData = SIMFA_SOURCE_DIR "/tests/kernel/data/";

Manifest load(const std::string& file, const std::vector<Override>& overrides = {}) {
  static const TestCatalog catalog;
  return resolve_manifest(read_manifest(kData + file, overrides), catalog);
}

// The messages of the ManifestError that loading `file` throws.
std::vector<std::string> errors(const std::string& file,
                                const std::vector<Override>& overrides = {}) {
  try {
    load(file, overrides);
  } catch (const ManifestError& e) {
    return e.messages;
  }
  ADD_FAILURE() << file << " loaded without errors";
  return {};
}

const Params& params(const Manifest& m, std::string_view slot) {
  const ComponentConfig* c = m.find(slot);
  EXPECT_NE(c, nullptr) << slot;
  return c->params;
}

using Messages = std::vector<std::string>;

// ---------------------------------------------------------------------------------------------
// A valid manifest.

TEST(Manifest, ResolvesEverySlotWithDefaultsAndUnits) {
  const Manifest m = load("base.toml");
  EXPECT_EQ(m.path, kData + "base.toml");
  EXPECT_EQ(m.seed, 7u);
  EXPECT_EQ(m.max_cycles, 0u);
  EXPECT_EQ(m.gpu.name, "TestGPU");
  EXPECT_EQ(m.gpu.sm_count, 4);
  EXPECT_EQ(m.gpu.clock_mhz, 1830.0);
  EXPECT_EQ(m.gpu.smem_per_sm_bytes, 228 * 1024);
  EXPECT_EQ(m.gpu.regs_per_sm, 65536);
  EXPECT_EQ(m.gpu.max_ctas_per_sm, 32);
  EXPECT_EQ(m.gpu.max_warpgroups_per_sm, 16);
  // The analytical numbers' defaults (H800).
  EXPECT_EQ(m.l2_bytes, 50 * 1024 * 1024);
  EXPECT_EQ(m.l2_partitions, 2);
  EXPECT_EQ(m.dram_bandwidth, 3.35e12);
  EXPECT_EQ(m.mma_flops_per_cycle_per_sm, 4096.0);

  std::vector<std::string> slots;
  for (const ComponentConfig& c : m.components) slots.push_back(c.slot + "=" + c.plugin);
  EXPECT_EQ(slots, (std::vector<std::string>{
                       "sm=sm.warpgroup", "sm.scheduler=scheduler.gto", "sm.tma=tma.traffic",
                       "sm.tensor_core=wgmma.half_n", "dispatch=dispatch.round_robin",
                       "memory=memory.hier", "memory.l2=l2.unified",
                       "memory.l2.slice_map=slice.xor", "memory.dram=dram.fixed"}));

  const ComponentConfig& l2 = *m.find("memory.l2");
  EXPECT_EQ(l2.entry->name, "l2.unified");
  EXPECT_EQ(l2.params.path(), "memory.l2");
  EXPECT_EQ(l2.params.size_bytes("size"), 50 * 1024 * 1024);
  EXPECT_EQ(l2.params.integer("assoc"), 16);
  EXPECT_EQ(l2.params.size_bytes("line"), 128);  // default
  EXPECT_EQ(l2.params.string("write_policy"), "write_back");
  EXPECT_EQ(l2.where.str(), kData + "base.toml:35:1");
  EXPECT_EQ(l2.params.where("assoc").str(), kData + "base.toml:38:9");
  EXPECT_EQ(l2.params.where("line").str(), kData + "base.toml:35:1");  // a default: the table
  EXPECT_EQ(params(m, "memory.dram").bandwidth("bandwidth"), 3.35e12);
  EXPECT_EQ(m.find("l2"), nullptr);
}

TEST(Manifest, ExposesTheSlotsAndTheFixedTablesSchemas) {
  // The kernel knows the GPU-level slots alone; the SM's engines are its plugin's sub-slots.
  EXPECT_EQ(kGpuSlots.size(), 3u);
  EXPECT_EQ(kGpuSlots[0].name, "sm");
  EXPECT_EQ(kGpuSlots[2].kind, "memory");
  EXPECT_FALSE(simfa_table_schema().find("manifest_version")->default_value);
  EXPECT_EQ(gpu_table_schema().find("smem_per_sm")->type, ParamType::kSize);
  EXPECT_EQ(std::get<double>(*gpu_table_schema().find("mma_flops_per_cycle_per_sm")->default_value),
            4096.0);
}

// ---------------------------------------------------------------------------------------------
// Errors, each at its exact location.

TEST(ManifestErrors, UnknownKeySuggestsTheClosest) {
  EXPECT_EQ(
      errors("unknown_key.toml"),
      Messages{kData + "unknown_key.toml:6:1: error: [memory.l2] unknown key 'asoc' (did you mean "
                       "'assoc'?) [plugin l2.unified 1.0.0]"});
}

TEST(ManifestErrors, WrongType) {
  EXPECT_EQ(
      errors("wrong_type.toml"),
      (Messages{kData + "wrong_type.toml:6:8: error: [memory.l2] key 'size': expected size (bytes, "
                        "or a string with a unit: B, KB, MB, GB, KiB, MiB, GiB), got string 'abc' "
                        "[plugin l2.unified 1.0.0]",
                kData + "wrong_type.toml:7:9: error: [memory.l2] key 'assoc': expected int, got "
                        "string '16' [plugin l2.unified 1.0.0]"}));
}

// A TOML boolean sets a string key whose choices hold "true" and "false" (a switch with an
// `auto`), and is still a type error for any other string key.
TEST(Manifest, BooleanSetsAStringKeyThatOffersTrueAndFalse) {
  EXPECT_EQ(params(load("bool_choice.toml"), "memory.dram").string("refresh"), "false");
  EXPECT_EQ(errors("bool_choice.toml", {{"memory.dram.policy", "true"}}),
            (Messages{"--set memory.dram.policy=true: error: [memory.dram] key 'policy' = 'true' "
                      "is not one of 'open', 'closed' [plugin dram.switched 1.0.0]"}));
  EXPECT_EQ(errors("bool_policy.toml"),
            (Messages{kData + "bool_policy.toml:7:10: error: [memory.dram] key 'policy': expected "
                              "string, got bool true [plugin dram.switched 1.0.0]"}));
}

TEST(ManifestErrors, OutOfRangeNamesTheRange) {
  // Reported in file order, although [gpu] is validated before [memory.l2].
  EXPECT_EQ(
      errors("out_of_range.toml"),
      (Messages{kData + "out_of_range.toml:6:9: error: [memory.l2] key 'assoc' = 100 is out of "
                        "range [1, 64] ways [plugin l2.unified 1.0.0]",
                kData + "out_of_range.toml:9:12: error: [gpu] key 'sm_count' = 0 is out of range "
                        "[1, 2147483647] SMs"}));
}

TEST(ManifestErrors, UnknownPluginSuggestsOneOfTheSlotsKind) {
  EXPECT_EQ(
      errors("unknown_plugin.toml"),
      Messages{kData + "unknown_plugin.toml:6:10: error: [sm.tma] unknown plugin 'tma.trafic' (did "
                       "you mean 'tma.traffic'?)"});
  // Nothing close: the plugins of the slot's kind are listed.
  EXPECT_EQ(
      errors("base.toml", {{"scheduler.plugin", "fifo"}}),
      Messages{"--set scheduler.plugin=fifo: error: [sm.scheduler] unknown plugin 'fifo' (kind "
               "'scheduler': scheduler.gto, scheduler.lrr)"});
}

TEST(ManifestErrors, PluginOfTheWrongKind) {
  EXPECT_EQ(errors("wrong_kind.toml"),
            Messages{kData + "wrong_kind.toml:6:10: error: [sm.tma] plugin 'wgmma.half_n' is of "
                             "kind 'wgmma'; [sm.tma] takes kind 'tma'"});
}

TEST(ManifestErrors, MissingKeyPointsAtItsTable) {
  EXPECT_EQ(
      errors("missing_key.toml"),
      Messages{kData + "missing_key.toml:5:1: error: [sm.tma] missing required key 'latency' (int: "
                       "fixed latency of every TMA operation) [plugin tma.fixed 1.0.0]"});
}

TEST(ManifestErrors, UnknownTableSuggestsASlot) {
  EXPECT_EQ(
      errors("unknown_table.toml"),
      (Messages{kData + "unknown_table.toml:5:1: error: unknown table [memroy] (did you mean "
                        "[memory]?)",
                kData + "unknown_table.toml:8:1: error: [memory] unknown table [memory.l3] (did "
                        "you mean [memory.l2]?) [plugin memory.hier 1.0.0]"}));
}

TEST(ManifestErrors, MissingTablesPointAtTheFileOrTheParentTable) {
  const std::string f = kData + "missing_table.toml";
  EXPECT_EQ(
      errors("missing_table.toml"),
      (Messages{f + ":4:1: error: [gpu] missing required key 'max_warpgroups_per_sm' (int: "
                    "resident WarpGroups per SM)",
                f + ":12:1: error: [sm] missing required table [sm.tma] (a plugin of kind 'tma') "
                    "[plugin sm.warpgroup 1.0.0]",
                f + ":24:1: error: [memory] missing required table [memory.dram] (a plugin of kind "
                    "'dram') [plugin memory.hier 1.0.0]",
                f + ":27:1: error: [memory.l2] missing required table [memory.l2.slice_map] (a "
                    "plugin of kind 'slice') [plugin l2.unified 1.0.0]"}));
}

TEST(ManifestErrors, EveryErrorOfAFileIsReported) {
  const std::string f = kData + "three_errors.toml";
  EXPECT_EQ(
      errors("three_errors.toml"),
      (Messages{f + ":4:1: error: [simfa] unknown key 'sede' (did you mean 'seed'?)",
                f + ":7:13: error: [gpu] key 'clock_mhz': expected frequency (MHz, or a string "
                    "with a unit: Hz, kHz, MHz, GHz), got string 'fast'",
                f + ":10:10: error: [sm.scheduler] unknown plugin 'scheduler.gtoo' (did you mean "
                    "'scheduler.gto'?)"}));
}

TEST(ManifestErrors, ErrorIsEveryMessageOnItsOwnLine) {
  try {
    load("three_errors.toml");
    FAIL();
  } catch (const ManifestError& e) {
    EXPECT_EQ(std::string(e.what()), e.messages[0] + "\n" + e.messages[1] + "\n" + e.messages[2]);
  }
}

TEST(ManifestErrors, TomlSyntaxErrorIsLocated) {
  const Messages m = errors("syntax_error.toml");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].rfind(kData + "syntax_error.toml:3:", 0), 0u) << m[0];
  EXPECT_NE(m[0].find("error: invalid TOML: "), std::string::npos) << m[0];
  EXPECT_NE(m[0].find("manifest_version"), std::string::npos) << m[0];
}

TEST(ManifestErrors, UnreadableFiles) {
  EXPECT_EQ(errors("no_such.toml"), Messages{kData + "no_such.toml: error: cannot read '" + kData +
                                             "no_such.toml': No such file or directory"});
  EXPECT_EQ(errors("missing_base.toml"),
            Messages{kData + "missing_base.toml:3:11: error: cannot read '" + kData +
                     "no_such_base.toml': No such file or directory"});
}

// ---------------------------------------------------------------------------------------------
// extends

TEST(Extends, DerivedManifestOverridesItsBase) {
  const ManifestDocument doc = read_manifest(kData + "derived.toml", {});
  EXPECT_EQ(doc.files(), (std::vector<std::string>{kData + "derived.toml", kData + "base.toml"}));
  const Manifest m = load("derived.toml");
  EXPECT_EQ(m.seed, 9u);
  EXPECT_EQ(m.gpu.sm_count, 4);  // inherited
  const ComponentConfig& tma = *m.find("sm.tma");
  EXPECT_EQ(tma.plugin, "tma.fixed");
  EXPECT_EQ(tma.params.integer("latency"), 500);
  // Another plugin replaced the table: tma.traffic's setup_cycles was not carried over.
  EXPECT_EQ(tma.params.entries().size(), 1u);
  EXPECT_EQ(tma.where.str(), kData + "derived.toml:7:1");
  const Params& l2 = params(m, "memory.l2");
  EXPECT_EQ(l2.integer("assoc"), 8);
  EXPECT_EQ(l2.where("assoc").str(), kData + "derived.toml:12:9");
  EXPECT_EQ(l2.size_bytes("size"), 50 * 1024 * 1024);
  EXPECT_EQ(l2.where("size").str(), kData + "base.toml:37:8");
  EXPECT_EQ(params(m, "memory.l2.slice_map").integer("num_slices"), 80);
  EXPECT_FALSE(m.resolved.at("simfa").as_object().contains("extends"));
}

TEST(Extends, CycleNamesTheChain) {
  EXPECT_EQ(errors("cycle_a.toml"),
            Messages{kData + "cycle_b.toml:3:11: error: [simfa] extends cycle: " + kData +
                     "cycle_a.toml -> " + kData + "cycle_b.toml -> " + kData + "cycle_a.toml"});
}

// Found reviewing the loader beside fuzz_manifest (docs/reliability.md): a header of 20000 dotted
// keys overflowed the stack in fill_table, one of 100000 inside TOML++.
TEST(Toml, KeyPathsTooDeepAreLocatedBeforeTomlPlusPlusReadsThem) {
  const std::string corpus = SIMFA_SOURCE_DIR "/tests/fuzz/corpus/manifest/";
  auto message = [](const std::string& path) {
    try {
      read_manifest(path, {});
    } catch (const ManifestError& e) {
      return e.messages.front();
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(corpus + "regression-key-path-100-parts.toml"),
            corpus +
                "regression-key-path-100-parts.toml:4:2: error: a key path of more than 64 dotted "
                "parts: tables nested more than 64 deep");
  EXPECT_EQ(message(corpus + "regression-header-and-key-70-tables-deep.toml"),
            corpus +
                "regression-header-and-key-70-tables-deep.toml:5:49: error: tables nested "
                "more than 64 deep");
  // A --set value with such a key path is no TOML value: it stays the bare string.
  std::string deep = "1\n[a";
  for (int k = 0; k < 100000; ++k) deep += ".a";
  const DocValue v = parse_value_text("k", deep + "]", SourceLocation{"--set"}, {});
  EXPECT_EQ(v.kind, DocValue::Kind::kString);
}

// ---------------------------------------------------------------------------------------------
// --set

TEST(Overrides, SetsANestedKey) {
  const Manifest m =
      load("base.toml", {{"memory.l2.slice_map.num_slices", "96"}, {"memory.l2.assoc", "8"}});
  EXPECT_EQ(params(m, "memory.l2.slice_map").integer("num_slices"), 96);
  EXPECT_EQ(params(m, "memory.l2").integer("assoc"), 8);
  // The entry records the --set (Params::where() reports the table for any location without a
  // line, which an override has).
  const std::vector<Params::Entry>& entries = params(m, "memory.l2").entries();
  const auto assoc = std::find_if(entries.begin(), entries.end(),
                                  [](const Params::Entry& e) { return e.name == "assoc"; });
  ASSERT_NE(assoc, entries.end());
  EXPECT_EQ(assoc->where.str(), "--set memory.l2.assoc=8");
}

TEST(Overrides, ValuesTakeUnitsAndBareStrings) {
  const Manifest m = load("base.toml", {{"gpu.clock_mhz", "1.98GHz"},
                                        {"gpu.name", "1234"},
                                        {"gpu.smem_per_sm", "\"100KiB\""},
                                        {"memory.l2.write_policy", "write_through"}});
  EXPECT_EQ(m.gpu.clock_mhz, 1980.0);
  EXPECT_EQ(m.gpu.name, "1234");
  EXPECT_EQ(m.gpu.smem_per_sm_bytes, 100 * 1024);
  EXPECT_EQ(params(m, "memory.l2").string("write_policy"), "write_through");
}

TEST(Overrides, UnknownKeySuggestsTheClosest) {
  EXPECT_EQ(errors("base.toml", {{"memory.l2.asoc", "8"}}),
            Messages{"--set memory.l2.asoc=8: error: [memory.l2] unknown key 'asoc' (did you mean "
                     "'assoc'?) [plugin l2.unified 1.0.0]"});
  EXPECT_EQ(
      errors("base.toml", {{"memroy.l2.assoc", "8"}}),
      Messages{"--set memroy.l2.assoc=8: error: unknown table [memroy] (did you mean [memory]?)"});
}

TEST(Overrides, ValueIsTypeChecked) {
  // Errors of --set values come in the order the tables are validated.
  EXPECT_EQ(
      errors("base.toml", {{"memory.l2.assoc", "abc"}, {"simfa.seed", "-1"}}),
      (Messages{"--set simfa.seed=-1: error: [simfa] key 'seed' = -1 must be >= 0",
                "--set memory.l2.assoc=abc: error: [memory.l2] key 'assoc': expected int, got "
                "string 'abc' [plugin l2.unified 1.0.0]"}));
}

TEST(Overrides, SwitchingAPluginValidatesTheTableAgainstTheNewOne) {
  // The .plugin override applies first, whatever its position, and drops tma.traffic's keys.
  const Manifest m = load("base.toml", {{"tma.latency", "300"}, {"tma.plugin", "tma.fixed"}});
  EXPECT_EQ(m.find("sm.tma")->plugin, "tma.fixed");
  EXPECT_EQ(params(m, "sm.tma").integer("latency"), 300);

  EXPECT_EQ(
      errors("base.toml", {{"tma.plugin", "tma.fixed"}, {"tma.setup_cycles", "5"}}),
      (Messages{"--set tma.plugin=tma.fixed: error: [sm.tma] missing required key 'latency' (int: "
                "fixed latency of every TMA operation) [plugin tma.fixed 1.0.0]",
                "--set tma.setup_cycles=5: error: [sm.tma] unknown key 'setup_cycles' [plugin "
                "tma.fixed 1.0.0]"}));

  // A sub-slot's plugin.
  const Manifest linear = load("base.toml", {{"memory.l2.slice_map.plugin", "slice.linear"}});
  EXPECT_EQ(linear.find("memory.l2.slice_map")->plugin, "slice.linear");
}

TEST(Slots, AnOptionalSubSlotLeftOutGetsItsDefaultPlugin) {
  // No [memory.l2.replacement] table: the slot's default, with its defaults, in the resolved
  // manifest like any other component.
  const Manifest m = load("optional_slot.toml");
  const ComponentConfig* r = m.find("memory.l2.replacement");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->plugin, "replacement.lru");
  EXPECT_EQ(boost::json::serialize(m.resolved.at("memory").at("l2").at("replacement")),
            R"({"plugin":"replacement.lru"})");

  // Named: that plugin, its parameters checked as usual.
  const Manifest srrip =
      load("optional_slot.toml", {{"memory.l2.replacement.plugin", "replacement.srrip"},
                                  {"memory.l2.replacement.rrpv_bits", "3"}});
  EXPECT_EQ(srrip.find("memory.l2.replacement")->plugin, "replacement.srrip");
  EXPECT_EQ(params(srrip, "memory.l2.replacement").integer("rrpv_bits"), 3);
  EXPECT_NE(srrip.sha256, m.sha256);

  // A table without `plugin` is the default's parameters: rrpv_bits is not one of lru's.
  EXPECT_EQ(errors("optional_slot.toml", {{"memory.l2.replacement.rrpv_bits", "3"}}),
            (Messages{"--set memory.l2.replacement.rrpv_bits=3: error: [memory.l2.replacement] "
                      "unknown key 'rrpv_bits' [plugin replacement.lru 1.0.0]"}));
  EXPECT_EQ(errors("optional_slot.toml", {{"memory.l2.replacement.plugin", "replacement.srip"}}),
            (Messages{"--set memory.l2.replacement.plugin=replacement.srip: error: "
                      "[memory.l2.replacement] unknown plugin 'replacement.srip' (did you mean "
                      "'replacement.srrip'?)"}));
}

TEST(Slots, ADefaultPluginThatIsNotLoadedIsAnError) {
  const std::vector<std::string> messages = errors("broken_default.toml");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("[memory.l2.replacement] the default plugin 'replacement.missing' "
                             "(kind 'replacement') is not loaded"),
            std::string::npos)
      << messages[0];
}

TEST(Overrides, MalformedOverrides) {
  EXPECT_EQ(
      errors("base.toml",
             {{"seed", "1"}, {"gpu.name.x", "1"}, {"memory.l2", "1"}, {"simfa.extends", "x.toml"}}),
      (Messages{
          "--set seed=1: error: expected --set TABLE.KEY=VALUE, e.g. --set memory.l2.assoc=8",
          "--set gpu.name.x=1: error: 'gpu.name' is a key, not a table",
          "--set memory.l2=1: error: 'memory.l2' is a table; set one of its keys, e.g. "
          "memory.l2.plugin",
          "--set simfa.extends=x.toml: error: [simfa] 'extends' cannot be overridden; write a "
          "manifest that extends this one"}));
  EXPECT_EQ(parse_override("a.b=c=d").value, "c=d");
  EXPECT_THROW(parse_override("a.b"), InputError);
}

TEST(Overrides, PluginPathResolvesAgainstItsManifest) {
  const ManifestDocument doc = read_manifest(kData + "derived.toml", {});
  EXPECT_TRUE(doc.plugin_path().empty());
  const ManifestDocument set =
      read_manifest(kData + "base.toml", {{"simfa.plugin_path", "[\"plugins\", \"/opt/p\"]"}});
  EXPECT_EQ(set.plugin_path(), (std::vector<std::string>{"plugins", "/opt/p"}));
  try {
    read_manifest(kData + "base.toml", {{"simfa.plugin_path", "plugins"}});
    FAIL();
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.messages,
              Messages{"--set simfa.plugin_path=plugins: error: [simfa] key 'plugin_path': "
                       "expected array of strings, got string 'plugins'"});
  }
}

// ---------------------------------------------------------------------------------------------
// The SM and its engines: sub-slots of [sm], and the old top-level spelling read as them.

TEST(SmEngines, TheOldSpellingResolvesAsTheNew) {
  const Manifest old_spelling = load("base.toml"), new_spelling = load("new_spelling.toml");
  EXPECT_EQ(boost::json::serialize(old_spelling.resolved),
            boost::json::serialize(new_spelling.resolved));
  EXPECT_EQ(old_spelling.sha256, new_spelling.sha256);
  // The moved table keeps where the file wrote it.
  EXPECT_EQ(old_spelling.find("sm.tma")->where.str(), kData + "base.toml:25:1");
  EXPECT_EQ(new_spelling.find("sm.tma")->where.str(), kData + "new_spelling.toml:22:1");
  EXPECT_EQ(old_spelling.find("tma"), nullptr);
}

TEST(SmEngines, OldSetKeysAreTheNewOnes) {
  const Manifest old_key = load("base.toml", {{"tma.plugin", "tma.fixed"}, {"tma.latency", "7"}});
  const Manifest new_key =
      load("new_spelling.toml", {{"sm.tma.plugin", "tma.fixed"}, {"sm.tma.latency", "7"}});
  EXPECT_EQ(params(old_key, "sm.tma").integer("latency"), 7);
  EXPECT_EQ(old_key.sha256, new_key.sha256);
  // A derived file in one spelling over a base in the other.
  EXPECT_EQ(load("derived.toml").find("sm.tma")->plugin, "tma.fixed");
}

TEST(SmEngines, BothSpellingsInOneFileAreAnError) {
  EXPECT_EQ(errors("both_spellings.toml"),
            Messages{kData + "both_spellings.toml:9:1: error: [tma] is the old spelling of "
                             "[sm.tma], which this file also writes at line 5; the SM's engines "
                             "are sub-slots of [sm]: write the keys in [sm.tma] alone"});
}

TEST(SmEngines, AnEngineTheSmPluginDoesNotDeclareIsAnError) {
  EXPECT_EQ(errors("sm_without_tma.toml"),
            Messages{kData + "sm_without_tma.toml:14:1: error: [sm] unknown table [sm.tma]; its "
                             "plugin declares [sm.scheduler], [sm.umma] [plugin sm.bare 1.0.0]"});
  EXPECT_EQ(errors("new_spelling.toml", {{"sm.tma.plugin", "tma.trafic"}}),
            Messages{"--set sm.tma.plugin=tma.trafic: error: [sm.tma] unknown plugin "
                     "'tma.trafic' (did you mean 'tma.traffic'?)"});
}

TEST(SmEngines, APluginsInstructionsBringAnEngineSlot) {
  TestCatalog catalog;
  catalog.with_umma_instructions = true;
  const Manifest m = resolve_manifest(
      read_manifest(kData + "new_spelling.toml", {{"sm.umma.plugin", "umma.demo"}}), catalog);
  EXPECT_EQ(m.find("sm.umma")->plugin, "umma.demo");
  EXPECT_EQ(boost::json::serialize(m.resolved.at("sm").at("umma")), R"({"plugin":"umma.demo"})");
  // Of the engine's kind only.
  try {
    resolve_manifest(read_manifest(kData + "new_spelling.toml", {{"sm.umma.plugin", "tma.fixed"}}),
                     catalog);
    ADD_FAILURE();
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.messages, Messages{"--set sm.umma.plugin=tma.fixed: error: [sm.umma] plugin "
                                   "'tma.fixed' is of kind 'tma'; [sm.umma] takes kind 'umma'"});
  }
  // Without a library adding instructions of that kind, there is no such slot.
  EXPECT_EQ(errors("new_spelling.toml", {{"sm.umma.plugin", "umma.demo"}}),
            Messages{"--set sm.umma.plugin=umma.demo: error: [sm] unknown table [sm.umma] (did "
                     "you mean [sm.tma]?); no loaded plugin adds instructions of kind 'umma' (is "
                     "its library on the plugin path?) [plugin sm.warpgroup 1.0.0]"});
  EXPECT_EQ(errors("new_spelling.toml", {{"sm.mma_engine.plugin", "umma.demo"}}),
            Messages{"--set sm.mma_engine.plugin=umma.demo: error: [sm] unknown table "
                     "[sm.mma_engine]; its plugin declares [sm.scheduler], [sm.tma], "
                     "[sm.tensor_core], and takes an engine for each kind of instruction a plugin "
                     "adds (no loaded plugin adds one) [plugin sm.warpgroup 1.0.0]"});
}

// ---------------------------------------------------------------------------------------------
// The resolved manifest and its hash.

TEST(Resolved, HoldsEveryTableExpandedAndSorted) {
  const Manifest m = load("base.toml");
  const boost::json::object& r = m.resolved;
  std::vector<std::string> keys;
  for (const auto& kv : r) keys.emplace_back(kv.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"dispatch", "gpu", "memory", "simfa", "sm"}));
  // The SM's engines are nested in it, as [memory]'s levels are.
  EXPECT_EQ(boost::json::serialize(r.at("sm").at("tma")),
            R"({"plugin":"tma.traffic","setup_cycles":40})");
  EXPECT_EQ(boost::json::serialize(r.at("simfa")),
            R"({"manifest_version":1,"max_cycles":0,"seed":7})");
  EXPECT_EQ(r.at("gpu").at("smem_per_sm").as_int64(), 233472);
  EXPECT_EQ(r.at("gpu").at("clock_mhz").as_double(), 1830.0);
  EXPECT_EQ(boost::json::serialize(r.at("memory").at("l2")),
            R"({"assoc":16,"line":128,"plugin":"l2.unified","size":52428800,)"
            R"("slice_map":{"num_slices":80,"plugin":"slice.xor"},"write_policy":"write_back"})");
  EXPECT_EQ(r.at("memory").at("dram").at("bandwidth").as_double(), 3.35e12);
  EXPECT_EQ(m.sha256, sha256_hex(boost::json::serialize(r)));
}

TEST(Resolved, HashIgnoresLayoutAndExplicitDefaults) {
  const Manifest base = load("base.toml");
  EXPECT_EQ(load("base_equivalent.toml").sha256, base.sha256);
  EXPECT_EQ(load("base.toml", {{"memory.l2.line", "128"}}).sha256, base.sha256);
}

TEST(Resolved, HashFollowsEveryParameter) {
  const Manifest base = load("base.toml");
  EXPECT_NE(load("base.toml", {{"memory.l2.assoc", "8"}}).sha256, base.sha256);
  EXPECT_NE(load("base.toml", {{"simfa.seed", "8"}}).sha256, base.sha256);
  EXPECT_NE(load("base.toml", {{"memory.l2.slice_map.plugin", "slice.linear"}}).sha256,
            base.sha256);
  EXPECT_NE(load("derived.toml").sha256, base.sha256);
}

// ---------------------------------------------------------------------------------------------
// Building blocks.

TEST(Sha256, FipsTestVectors) {
  // FIPS 180-4 examples (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf").
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalUpdatesMatchOneShot) {
  const std::string text(200, 'x');
  for (std::size_t split : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 199u}) {
    Sha256 h;
    h.update(std::string_view(text).substr(0, split));
    h.update(std::string_view(text).substr(split));
    Sha256 one;
    one.update(text);
    EXPECT_EQ(h.finish(), one.finish()) << split;
  }
}

}  // namespace
}  // namespace simfa::kernel
