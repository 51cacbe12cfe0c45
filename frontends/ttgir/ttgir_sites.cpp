#include "ttgir_sites.h"

#include <charconv>

#include "ttgir_syntax.h"

namespace simfa::ttgir {

namespace {

struct KindNames {
  SiteKind kind;
  const char* name;    // scope kind field
  const char* legacy;  // tools/device/triton_trace.py's short op name
};
// Longest legacy names first: "tma_store_wait" must not read as "tma_store".
constexpr KindNames kKinds[] = {
    {SiteKind::kTmaStoreWait, "TMA_STORE_WAIT", "tma_store_wait"},
    {SiteKind::kWgmmaWait, "WGMMA_WAIT", "wgmma_wait"},
    {SiteKind::kTmaLoad, "TMA_LOAD", "tma_load"},
    {SiteKind::kTmaStore, "TMA_STORE", "tma_store"},
    {SiteKind::kWgmma, "WGMMA", "wgmma"},
    {SiteKind::kMbarWait, "MBAR_WAIT", "wait_bar"},
    {SiteKind::kMbarArrive, "MBAR_ARRIVE", "arrive_bar"},
};

std::string join_dims(const std::vector<std::int64_t>& dims) {
  std::string s;
  for (auto d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

std::string scope_of(const MlirDocument& doc, const Operation& op, SiteKind kind,
                     std::uint32_t id) {
  const OpView v(doc, op);
  std::string s = std::string("SIMFA|") + site_kind_name(kind);
  switch (kind) {
    case SiteKind::kTmaLoad:
    case SiteKind::kTmaStore: {
      const auto values = v.values();
      const auto types = v.types();
      if (values.empty() || types.empty()) v.fail("expected a descriptor operand and its type");
      const DescBlock block = desc_block(v, types.front());
      s += "|desc=" + std::string(doc.token(values.front()).text) + "|box=" +
           join_dims(block.shape) + "|dtype=" + dtype_name(block.elem) +
           "|bytes=" + std::to_string(block.bytes());
      break;
    }
    case SiteKind::kWgmma: {
      const DotShape d = dot_shape(v);
      s += "|M=" + std::to_string(d.m) + "|N=" + std::to_string(d.n) +
           "|K=" + std::to_string(d.k) + "|instrM=" + std::to_string(d.instr_m) +
           "|instrN=" + std::to_string(d.instr_n) + "|instrK=" + std::to_string(d.instr_k) +
           "|warps=" + std::to_string(d.layout.warps_m) + "x" + std::to_string(d.layout.warps_n) +
           "|dtype=" + d.dtype + "|acc=" + d.acc + "|mode=" + (d.register_a ? "RS" : "SS") +
           "|async=" + (d.is_async ? "1" : "0");
      break;
    }
    case SiteKind::kWgmmaWait:
      s += "|pendings=" + std::to_string(v.attr_int("pendings").value_or(0));
      break;
    case SiteKind::kMbarArrive: {
      const auto counts = v.integers();
      if (counts.empty()) v.fail("expected an arrival count after the barrier");
      s += "|count=" + std::to_string(counts.front());
      break;
    }
    case SiteKind::kTmaStoreWait:
    case SiteKind::kMbarWait:
      break;
  }
  return s + "|site=" + std::to_string(id);
}

void walk(const MlirDocument& doc, const std::vector<Operation>& ops, bool allow_records,
          std::vector<Site>& out) {
  for (const Operation& op : ops) {
    const std::string name = canonical_name(op.name);
    if (name == "proton.record" && !allow_records)
      doc.fail(op.pos, "the TTGIR is already instrumented (proton.record)");
    if (auto kind = site_kind_of(name)) {
      Site s;
      s.id = static_cast<std::uint32_t>(out.size());
      s.kind = *kind;
      s.op = &op;
      s.scope = scope_of(doc, op, *kind, s.id);
      out.push_back(std::move(s));
    }
    for (const Region& r : op.regions) walk(doc, r.ops, allow_records, out);
  }
}

bool parse_u32(std::string_view text, std::uint32_t& out) {
  if (text.empty()) return false;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

}  // namespace

const char* site_kind_name(SiteKind kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return k.name;
  return "?";
}

std::optional<SiteKind> site_kind_of(std::string_view op) {
  if (op == "ttng.async_tma_copy_global_to_local") return SiteKind::kTmaLoad;
  if (op == "ttng.async_tma_copy_local_to_global") return SiteKind::kTmaStore;
  if (op == "ttng.async_tma_store_wait" || op == "ttng.async_tma_store_token_wait")
    return SiteKind::kTmaStoreWait;
  if (op == "ttng.warp_group_dot") return SiteKind::kWgmma;
  if (op == "ttng.warp_group_dot_wait") return SiteKind::kWgmmaWait;
  if (op == "ttng.wait_barrier") return SiteKind::kMbarWait;
  if (op == "ttng.arrive_barrier") return SiteKind::kMbarArrive;
  return std::nullopt;
}

std::vector<Site> enumerate_sites(const MlirDocument& doc, bool allow_records) {
  std::vector<Site> out;
  walk(doc, doc.ops, allow_records, out);
  return out;
}

std::optional<ScopeName> parse_scope_name(std::string_view name) {
  ScopeName s;
  if (name.starts_with("SIMFA|")) {
    s.simfa = true;
    const std::string_view rest = name.substr(6);
    const std::string_view kind = rest.substr(0, rest.find('|'));
    bool known = false;
    for (const auto& k : kKinds)
      if (kind == k.name) {
        s.kind = k.kind;
        known = true;
      }
    const std::size_t at = name.rfind("|site=");
    if (!known || at == std::string_view::npos || !parse_u32(name.substr(at + 6), s.site))
      return std::nullopt;
    return s;
  }
  for (const auto& k : kKinds) {
    const std::string_view prefix = k.legacy;
    if (!name.starts_with(prefix) || name.size() <= prefix.size() || name[prefix.size()] != '_')
      continue;
    std::string_view digits = name.substr(prefix.size() + 1);
    digits = digits.substr(0, digits.find('_'));
    if (digits.size() < 3 || !parse_u32(digits, s.site)) continue;
    s.kind = k.kind;
    return s;
  }
  return std::nullopt;
}

}  // namespace simfa::ttgir
