// docs/analytical.md carries the tables the model generates, unchanged.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "docs_table.h"

namespace simfa::analytical::testing {
namespace {

std::string document() {
  std::ifstream in(std::string(SIMFA_SOURCE_DIR) + "/docs/analytical.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(DocsTable, DocumentCarriesTheGeneratedTables) {
  const std::string text = document();
  ASSERT_FALSE(text.empty()) << "docs/analytical.md missing";
  for (const std::string& expected : {std::string(kKeysTableBegin) + keys_table() + kKeysTableEnd,
                                      std::string(kDramTableBegin) + dram_table() + kDramTableEnd,
                                      std::string(kFieldsTableBegin) + fields_table() + kFieldsTableEnd})
    EXPECT_NE(text.find(expected), std::string::npos)
        << "regenerate the tables with bin/analytical_docs_table; expected\n" << expected;
}

}  // namespace
}  // namespace simfa::analytical::testing
