// Files the frontend tests read and write: the committed fixtures under tests/frontends/data.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace simfa::test {

inline std::string data_path(const std::string& name) {
  return std::string(SIMFA_SOURCE_DIR) + "/tests/frontends/data/" + name;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace simfa::test
