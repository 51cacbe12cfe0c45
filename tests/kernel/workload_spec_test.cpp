// --workload specs: inline FRONTEND:KEY=VALUE,..., .toml workload files and trace paths, with
// errors located by column in the spec or by file:line:col.
#include "kernel/workload_spec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace simfa::kernel {
namespace {

class WorkloadCatalog final : public SchemaCatalog {
 public:
  WorkloadCatalog() {
    add("workload.gemm", [](Schema& s) {
      s.integer("m").min(1).doc("rows of C");
      s.integer("n").min(1).doc("columns of C");
      s.integer("k").min(1).doc("reduction length");
      s.integer("tile_m").def(128).range(64, 256).doc("CTA tile rows");
      s.string("order").def("row").choices({"row", "column"}).doc("raster order");
      s.boolean("warp_specialized").def(true).doc("producer/consumer WarpGroups");
    });
    add("workload.fa3_events",
        [](Schema& s) { s.integer("seqlen").def(512).min(1).doc("sequence"); });
    add("workload.trace", [](Schema& s) { s.string("path").doc("trace file"); });
    add("sm.warpgroup", [](Schema&) {});
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
const WorkloadCatalog kCatalog;

using Messages = std::vector<std::string>;

Messages errors(const std::string& spec) {
  try {
    parse_workload_spec(spec, kCatalog);
  } catch (const ManifestError& e) {
    return e.messages;
  }
  ADD_FAILURE() << spec << " parsed without errors";
  return {};
}

TEST(WorkloadSpec, InlineSpecIsTypedByTheSchema) {
  const ComponentConfig c =
      parse_workload_spec("gemm:m=4096,n=2048,k=512,warp_specialized=false", kCatalog);
  EXPECT_EQ(c.slot, kWorkloadSlot);
  EXPECT_EQ(c.plugin, "workload.gemm");
  EXPECT_EQ(c.entry, kCatalog.find("workload.gemm"));
  EXPECT_EQ(c.params.path(), "workload");
  EXPECT_EQ(c.params.integer("m"), 4096);
  EXPECT_EQ(c.params.integer("n"), 2048);
  EXPECT_EQ(c.params.integer("k"), 512);
  EXPECT_FALSE(c.params.boolean("warp_specialized"));
  EXPECT_EQ(c.params.integer("tile_m"), 128);  // default
  EXPECT_EQ(c.params.where("n").str(), "--workload:1:15");

  const ComponentConfig fa3 = parse_workload_spec("fa3_events", kCatalog);
  EXPECT_EQ(fa3.plugin, "workload.fa3_events");
  EXPECT_EQ(fa3.params.integer("seqlen"), 512);
}

TEST(WorkloadSpec, InlineErrorsCarryTheirColumn) {
  EXPECT_EQ(
      errors("gemm:m=1,nn=2,k=x,n=4,order=diagonal,tile_m=32"),
      (Messages{"--workload:1:10: error: [workload] unknown key 'nn' (did you mean 'n'?) [plugin "
                "workload.gemm 1.0.0]",
                "--workload:1:17: error: [workload] key 'k': expected int, got string 'x' [plugin "
                "workload.gemm 1.0.0]",
                "--workload:1:29: error: [workload] key 'order' = 'diagonal' is not one of 'row', "
                "'column' [plugin workload.gemm 1.0.0]",
                "--workload:1:45: error: [workload] key 'tile_m' = 32 is out of range [64, 256] "
                "[plugin workload.gemm 1.0.0]"}));
}

TEST(WorkloadSpec, InlineSyntaxErrors) {
  EXPECT_EQ(
      errors("gem:m=1"),
      Messages{"--workload:1:1: error: unknown workload frontend 'gem' (did you mean 'gemm'?)"});
  EXPECT_EQ(
      errors("matmul"),
      Messages{"--workload:1:1: error: unknown workload frontend 'matmul' (frontends: fa3_events, "
               "gemm, trace)"});
  EXPECT_EQ(
      errors("gemm:m=1,m=2,n,k=3"),
      (Messages{"--workload:1:1: error: [workload] missing required key 'n' (int: columns of C) "
                "[plugin workload.gemm 1.0.0]",
                "--workload:1:10: error: duplicate key 'm' (first given at column 6)",
                "--workload:1:14: error: expected KEY=VALUE, got 'n'"}));
  EXPECT_EQ(
      errors("gemm:n=1,k=1"),
      Messages{
          "--workload:1:1: error: [workload] missing required key 'm' (int: rows of C) [plugin "
          "workload.gemm 1.0.0]"});
}

TEST(WorkloadSpec, TomlFile) {
  const ComponentConfig c = parse_workload_spec(kData + "gemm_workload.toml", kCatalog);
  EXPECT_EQ(c.plugin, "workload.gemm");
  EXPECT_EQ(c.params.integer("k"), 1024);
  EXPECT_EQ(c.params.string("order"), "column");
  EXPECT_EQ(c.where.str(), kData + "gemm_workload.toml:2:1");
  EXPECT_EQ(c.params.where("m").str(), kData + "gemm_workload.toml:4:5");
}

TEST(WorkloadSpec, TomlFileErrorsCarryFileLineColumn) {
  const std::string f = kData + "bad_workload.toml";
  EXPECT_EQ(
      errors(f),
      (Messages{f + ":1:1: error: [workload] missing required key 'k' (int: reduction length) "
                    "[plugin workload.gemm 1.0.0]",
                f + ":4:5: error: [workload] key 'n': expected int, got string 'big' [plugin "
                    "workload.gemm 1.0.0]",
                f + ":5:1: error: [workload] unknown key 'kk' (did you mean 'k'?) [plugin "
                    "workload.gemm 1.0.0]"}));
  EXPECT_EQ(
      errors(kData + "bad_frontend_workload.toml"),
      Messages{kData + "bad_frontend_workload.toml:2:12: error: unknown workload frontend 'gemmm' "
                       "(did you mean 'gemm'?)"});
  // A manifest is not a workload file.
  const std::string manifest = kData + "missing_key.toml";
  EXPECT_EQ(errors(manifest), (Messages{manifest + ":1:1: error: unknown table [simfa]",
                                        manifest + ":1:1: error: missing required table [workload]",
                                        manifest + ":5:1: error: unknown table [tma]"}));
}

TEST(WorkloadSpec, AnyOtherFileIsATrace) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "simfa_workload_spec_test";
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "tiny.trace").string();
  std::ofstream(trace) << "# empty\n";
  const ComponentConfig c = parse_workload_spec(trace, kCatalog);
  EXPECT_EQ(c.plugin, "workload.trace");
  EXPECT_EQ(c.params.string("path"), trace);
  std::filesystem::remove_all(dir);
}

TEST(WorkloadSpec, MissingFilesAreNamed) {
  EXPECT_EQ(
      errors("traces/none.trace"),
      Messages{
          "--workload:1:1: error: cannot read 'traces/none.trace': No such file or directory"});
  EXPECT_EQ(errors("none.toml"),
            Messages{"--workload:1:1: error: cannot read 'none.toml': No such file or directory"});
}

}  // namespace
}  // namespace simfa::kernel
