#include "ttgir_instrument.h"

#include <cstdio>
#include <fstream>

namespace simfa::ttgir {

std::string instrument_ttgir(const MlirDocument& doc, std::vector<Site>* sites_out) {
  std::vector<Site> sites = enumerate_sites(doc);
  // Lines as Python's str.splitlines() sees them for '\n'-separated text, so that the device
  // script's port produces the same bytes: a final newline ends the last line, none is added.
  std::vector<std::string_view> lines;
  const std::string_view text = doc.text;
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  std::vector<const Site*> starts(lines.size() + 1, nullptr), ends(lines.size() + 1, nullptr);
  for (const Site& s : sites) {
    const std::uint32_t first = doc.token(s.op->first_token).pos.line;
    const std::uint32_t last = doc.token(s.op->last_token).pos.line;
    if (starts[first] || ends[first] || starts[last] || ends[last])
      doc.fail(s.op->pos, "two instrumentation sites share a line; put each op on its own line");
    starts[first] = &s;
    ends[last] = &s;
  }
  std::string out;
  out.reserve(text.size() + sites.size() * 160);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::string_view indent = line.substr(0, line.find_first_not_of(" \t"));
    if (const Site* s = starts[i + 1])
      out.append(indent).append("proton.record start \"").append(s->scope).append("\"\n");
    out.append(line).append("\n");
    if (const Site* s = ends[i + 1])
      out.append(indent).append("proton.record end \"").append(s->scope).append("\"\n");
  }
  if (sites_out) *sites_out = std::move(sites);
  return out;
}

int run_ttgir_instrument(const std::string& in, const std::string& out) {
  MlirDocument doc;
  read_mlir_file(in, doc, SourceLocation{in}, "TTGIR file");
  std::vector<Site> sites;
  const std::string text = instrument_ttgir(doc, &sites);
  std::ofstream file(out, std::ios::binary);
  file << text;
  file.close();
  if (!file) throw Error("error: cannot write '" + out + "'");
  for (const Site& s : sites)
    std::printf("site %u line %u: %s\n", s.id, doc.token(s.op->first_token).pos.line,
                s.scope.c_str());
  std::printf("%zu sites: %s -> %s\n", sites.size(), in.c_str(), out.c_str());
  return 0;
}

}  // namespace simfa::ttgir
