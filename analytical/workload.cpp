#include "analytical/workload.h"

#include <charconv>
#include <string>
#include <vector>

#include "analytical/errors.h"
#include "analytical/floor_sum.h"
#include "simfa/int_math.h"
#include "simfa/spelling.h"

namespace simfa::analytical {

namespace {

constexpr std::string_view kModelNames[] = {"llama3-8b", "llama3-70b", "llama3-405b"};
struct ModelPreset {
  std::int64_t heads, kv_heads, head_dim;
};
// Llama 3 attention shapes (the paper's Table VII; Meta's model configs: 32/64/128 query heads,
// 8 KV heads, hidden size / heads = 128).
constexpr ModelPreset kModels[] = {{32, 8, 128}, {64, 8, 128}, {128, 8, 128}};
constexpr std::string_view kRasterNames[] = {"row_major", "grouped"};
constexpr std::string_view kDtypeNames[] = {"fp16", "bf16", "fp8"};
constexpr std::string_view kKindNames[] = {"fa3", "gemm"};

constexpr WorkloadKey kFa3Keys[] = {
    {"model", KeyType::choice, kModelNames, "Llama-3 preset: heads 32/64/128, kv_heads 8, head_dim 128"},
    {"batch", KeyType::integer, {}, "batch size"},
    {"heads", KeyType::integer, {}, "query heads"},
    {"kv_heads", KeyType::integer, {}, "key/value heads (GQA); default: heads"},
    {"seqlen", KeyType::integer, {}, "sets seqlen_q and seqlen_k"},
    {"seqlen_q", KeyType::integer, {}, "query sequence length"},
    {"seqlen_k", KeyType::integer, {}, "key/value sequence length"},
    {"head_dim", KeyType::integer, {}, "head dimension (default 128)"},
    {"block_m", KeyType::integer, {}, "Q tile rows per CTA (default 128)"},
    {"block_n", KeyType::integer, {}, "K/V tile rows per step (default 176; 128 when causal)"},
    {"stages", KeyType::integer, {}, "K/V pipeline stages (default 2; no effect on traffic)"},
    {"causal", KeyType::boolean, {}, "causal mask, bottom-right aligned (default false; unvalidated)"},
};
static_assert(std::size(kFa3Keys) == static_cast<std::size_t>(Fa3Key::count));

constexpr WorkloadKey kGemmKeys[] = {
    {"m", KeyType::integer, {}, "rows of A and C"},
    {"n", KeyType::integer, {}, "columns of B and C"},
    {"k", KeyType::integer, {}, "reduction dimension"},
    {"block_m", KeyType::integer, {}, "tile rows (default 128)"},
    {"block_n", KeyType::integer, {}, "tile columns (default 128)"},
    {"block_k", KeyType::integer, {}, "reduction step (default 64)"},
    {"stages", KeyType::integer, {}, "pipeline stages (default 3; no effect on traffic)"},
    {"warp_specialized", KeyType::boolean, {}, "producer/consumer WarpGroups (no effect on traffic)"},
    {"raster", KeyType::choice, kRasterNames, "CTA launch order (default row_major)"},
    {"dtype", KeyType::choice, kDtypeNames, "A/B element type (default fp16); C is 2 bytes"},
};
static_assert(std::size(kGemmKeys) == static_cast<std::size_t>(GemmKey::count));

// Keeps every product of the integer arithmetic in the models far from int64 overflow.
constexpr std::int64_t kMaxKeyValue = (std::int64_t{1} << 31) - 1;
constexpr double kMaxCtas = 1099511627776.0;  // 2^40

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::string one_of(std::span<const std::string_view> choices) {
  std::string text;
  for (std::string_view c : choices) text += (text.empty() ? "" : ", ") + std::string(c);
  return text;
}

template <class Key>
constexpr int idx(Key key) {
  return static_cast<int>(key);
}

Fa3Shape resolve_fa3(const WorkloadSpec& spec, std::vector<std::string>& errors) {
  Fa3Shape s;
  auto has = [&](Fa3Key k) { return spec.has(idx(k)); };
  auto get = [&](Fa3Key k) { return static_cast<std::int64_t>(spec.value[idx(k)]); };
  if (has(Fa3Key::model)) {
    const ModelPreset& preset = kModels[get(Fa3Key::model)];
    s.heads = preset.heads;
    s.kv_heads = preset.kv_heads;
    s.head_dim = preset.head_dim;
  }
  if (has(Fa3Key::batch)) s.batch = get(Fa3Key::batch);
  if (has(Fa3Key::heads)) s.heads = get(Fa3Key::heads);
  if (has(Fa3Key::kv_heads)) s.kv_heads = get(Fa3Key::kv_heads);
  else if (!has(Fa3Key::model)) s.kv_heads = s.heads;
  if (has(Fa3Key::head_dim)) s.head_dim = get(Fa3Key::head_dim);
  if (has(Fa3Key::block_m)) s.block_m = get(Fa3Key::block_m);
  if (has(Fa3Key::stages)) s.stages = get(Fa3Key::stages);
  if (has(Fa3Key::causal)) s.causal = get(Fa3Key::causal) != 0;
  // The fa3 frontend's default: FA3's kBlockN, 176, or 128 under a causal mask.
  if (has(Fa3Key::block_n)) s.block_n = get(Fa3Key::block_n);
  else if (s.causal) s.block_n = kCausalBlockN;

  if (has(Fa3Key::seqlen)) {
    if (has(Fa3Key::seqlen_q) || has(Fa3Key::seqlen_k))
      errors.push_back("fa3: seqlen sets both seqlen_q and seqlen_k; give seqlen, or seqlen_q and seqlen_k");
    s.seqlen_q = s.seqlen_k = get(Fa3Key::seqlen);
  } else {
    if (has(Fa3Key::seqlen_q)) s.seqlen_q = get(Fa3Key::seqlen_q);
    if (has(Fa3Key::seqlen_k)) s.seqlen_k = get(Fa3Key::seqlen_k);
    if (s.seqlen_q == 0 && s.seqlen_k == 0)
      errors.push_back("fa3: missing seqlen (or seqlen_q and seqlen_k)");
    else if (s.seqlen_q == 0)
      errors.push_back("fa3: missing seqlen_q (seqlen_k is given)");
    else if (s.seqlen_k == 0)
      errors.push_back("fa3: missing seqlen_k (seqlen_q is given)");
  }
  if (s.heads == 0) {
    errors.push_back("fa3: missing heads (give heads=..., or model=" + one_of(kModelNames) + ")");
  } else if (s.heads % s.kv_heads != 0) {
    errors.push_back("fa3: heads (" + std::to_string(s.heads) + ") must be a multiple of kv_heads (" +
                     std::to_string(s.kv_heads) + ")");
  }
  if (errors.empty() &&
      static_cast<double>(s.batch) * static_cast<double>(s.heads) *
              static_cast<double>(ceil_div(s.seqlen_q, s.block_m)) >
          kMaxCtas)
    errors.push_back("fa3: more than 2^40 CTAs (batch x heads x seqlen_q / block_m)");
  return s;
}

GemmShape resolve_gemm(const WorkloadSpec& spec, std::vector<std::string>& errors) {
  GemmShape s;
  auto has = [&](GemmKey k) { return spec.has(idx(k)); };
  auto get = [&](GemmKey k) { return static_cast<std::int64_t>(spec.value[idx(k)]); };
  for (GemmKey k : {GemmKey::m, GemmKey::n, GemmKey::k})
    if (!has(k)) errors.push_back("gemm: missing " + std::string(kGemmKeys[idx(k)].name));
  if (has(GemmKey::m)) s.m = get(GemmKey::m);
  if (has(GemmKey::n)) s.n = get(GemmKey::n);
  if (has(GemmKey::k)) s.k = get(GemmKey::k);
  if (has(GemmKey::block_m)) s.block_m = get(GemmKey::block_m);
  if (has(GemmKey::block_n)) s.block_n = get(GemmKey::block_n);
  if (has(GemmKey::block_k)) s.block_k = get(GemmKey::block_k);
  if (has(GemmKey::stages)) s.stages = get(GemmKey::stages);
  if (has(GemmKey::warp_specialized)) s.warp_specialized = get(GemmKey::warp_specialized) != 0;
  if (has(GemmKey::raster)) s.raster = static_cast<Raster>(get(GemmKey::raster));
  if (has(GemmKey::dtype)) s.dtype = static_cast<GemmDtype>(get(GemmKey::dtype));
  s.elem_bytes = s.dtype == GemmDtype::fp8 ? 1 : 2;
  if (errors.empty() &&
      static_cast<double>(ceil_div(s.m, s.block_m)) * static_cast<double>(ceil_div(s.n, s.block_n)) >
          kMaxCtas)
    errors.push_back("gemm: more than 2^40 CTAs (m / block_m x n / block_n)");
  return s;
}

}  // namespace

std::span<const WorkloadKey> workload_keys(WorkloadKind kind) {
  if (kind == WorkloadKind::fa3) return kFa3Keys;
  return kGemmKeys;
}

std::string_view workload_kind_name(WorkloadKind kind) { return kKindNames[static_cast<int>(kind)]; }

int find_workload_key(WorkloadKind kind, std::string_view name) {
  const auto keys = workload_keys(kind);
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i].name == name) return static_cast<int>(i);
  return -1;
}

bool parse_key_value(const WorkloadKey& key, std::string_view text, double& value,
                     std::string& problem) {
  switch (key.type) {
    case KeyType::integer: {
      std::int64_t v = 0;
      const char* end = text.data() + text.size();
      auto [ptr, ec] = std::from_chars(text.data(), end, v);
      if (ec != std::errc() || ptr != end || v < 1 || v > kMaxKeyValue) {
        problem = std::string(key.name) + " expects a positive integer below 2^31, got '" +
                  std::string(text) + "'";
        return false;
      }
      value = static_cast<double>(v);
      return true;
    }
    case KeyType::boolean:
      if (text == "true" || text == "1") {
        value = 1;
        return true;
      }
      if (text == "false" || text == "0") {
        value = 0;
        return true;
      }
      problem = std::string(key.name) + " expects true or false, got '" + std::string(text) + "'";
      return false;
    case KeyType::choice:
      for (std::size_t i = 0; i < key.choices.size(); ++i) {
        if (key.choices[i] == text) {
          value = static_cast<double>(i);
          return true;
        }
      }
      problem = "unknown " + std::string(key.name) + " '" + std::string(text) + "'" +
                did_you_mean(text, key.choices) + "; expected one of " + one_of(key.choices);
      return false;
  }
  return false;
}

std::string key_value_text(const WorkloadKey& key, double value) {
  switch (key.type) {
    case KeyType::integer: return std::to_string(static_cast<std::int64_t>(value));
    case KeyType::boolean: return value != 0 ? "true" : "false";
    case KeyType::choice: return std::string(key.choices[static_cast<std::size_t>(value)]);
  }
  return {};
}

WorkloadSpec parse_workload_spec(std::string_view text, std::string_view where) {
  std::vector<std::string> errors;
  const auto colon = text.find(':');
  const std::string_view kind_name = colon == std::string_view::npos ? text : text.substr(0, colon);
  WorkloadSpec spec;
  if (kind_name == "fa3") {
    spec.kind = WorkloadKind::fa3;
  } else if (kind_name == "gemm") {
    spec.kind = WorkloadKind::gemm;
  } else {
    std::string message;
    if (colon == std::string_view::npos) {
      message = "expected KIND:key=value,..., got '" + std::string(text) + "'";
    } else {
      message =
          "unknown workload '" + std::string(kind_name) + "'" + did_you_mean(kind_name, kKindNames);
    }
    throw_errors(where, {message + "; the analytical model takes fa3:key=value,... and gemm:key=value,..."});
  }
  const std::string_view kind = workload_kind_name(spec.kind);
  const auto keys = workload_keys(spec.kind);
  std::vector<std::string_view> key_names;
  for (const WorkloadKey& k : keys) key_names.push_back(k.name);

  std::string_view body = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  while (!body.empty()) {
    const auto comma = body.find(',');
    const std::string_view item = trim(body.substr(0, comma));
    body = comma == std::string_view::npos ? std::string_view{} : body.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      errors.push_back(std::string(kind) + ": expected key=value, got '" + std::string(item) + "'");
      continue;
    }
    const std::string_view name = trim(item.substr(0, eq));
    const std::string_view value_text = trim(item.substr(eq + 1));
    const int key = find_workload_key(spec.kind, name);
    if (key < 0) {
      errors.push_back(std::string(kind) + ": unknown key '" + std::string(name) + "'" +
                       did_you_mean(name, key_names));
      continue;
    }
    if (spec.has(key)) {
      errors.push_back(std::string(kind) + ": " + std::string(name) + " given twice");
      continue;
    }
    double value = 0;
    std::string problem;
    if (!parse_key_value(keys[key], value_text, value, problem)) {
      errors.push_back(std::string(kind) + ": " + problem);
      continue;
    }
    spec.set(key, value);
  }
  throw_if_errors(where, errors);
  return spec;
}

Workload resolve_workload(const WorkloadSpec& spec, std::string_view where) {
  std::vector<std::string> errors;
  Workload w;
  w.kind = spec.kind;
  if (spec.kind == WorkloadKind::fa3) w.fa3 = resolve_fa3(spec, errors);
  else w.gemm = resolve_gemm(spec, errors);
  throw_if_errors(where, errors);
  return w;
}

std::string describe_workload(const Workload& w) {
  auto b = [](bool v) { return v ? "true" : "false"; };
  auto n = [](std::int64_t v) { return std::to_string(v); };
  if (w.kind == WorkloadKind::fa3) {
    const Fa3Shape& s = w.fa3;
    return "fa3:batch=" + n(s.batch) + ",heads=" + n(s.heads) + ",kv_heads=" + n(s.kv_heads) +
           ",seqlen_q=" + n(s.seqlen_q) + ",seqlen_k=" + n(s.seqlen_k) + ",head_dim=" +
           n(s.head_dim) + ",block_m=" + n(s.block_m) + ",block_n=" + n(s.block_n) +
           ",stages=" + n(s.stages) + ",causal=" + b(s.causal);
  }
  const GemmShape& s = w.gemm;
  return "gemm:m=" + n(s.m) + ",n=" + n(s.n) + ",k=" + n(s.k) + ",block_m=" + n(s.block_m) +
         ",block_n=" + n(s.block_n) + ",block_k=" + n(s.block_k) + ",stages=" + n(s.stages) +
         ",warp_specialized=" + b(s.warp_specialized) + ",raster=" +
         std::string(kRasterNames[static_cast<int>(s.raster)]) + ",dtype=" +
         std::string(kDtypeNames[static_cast<int>(s.dtype)]);
}

}  // namespace simfa::analytical
