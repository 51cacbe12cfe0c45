#include "launch_args.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <sstream>

#include "simfa/spelling.h"
#include "simfa/tensor_map_limits.h"

namespace simfa::ttgir {

namespace {

bool parse_integer(std::string_view text, std::int64_t& out) {
  bool neg = false;
  int base = 10;
  if (!text.empty() && text.front() == '-') {
    neg = true;
    text.remove_prefix(1);
  }
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  std::uint64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() ||
      v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return false;
  out = neg ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
  return true;
}

bool parse_dims(std::string_view text, std::vector<std::int64_t>& dims) {
  dims.clear();
  for (;;) {
    const std::size_t x = text.find('x');
    std::int64_t d = 0;
    if (!parse_integer(text.substr(0, x), d)) return false;
    dims.push_back(d);
    if (x == std::string_view::npos) return true;
    text.remove_prefix(x + 1);
  }
}

std::string join(const std::vector<std::int64_t>& dims) {
  std::string s;
  for (auto d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

// "AxB" for rank 2: the form NAME.shape takes.
std::string dims_hint(std::size_t rank) {
  std::string s;
  for (std::size_t d = 0; d < rank; ++d) s += (d ? "x" : "") + std::string(1, static_cast<char>('A' + d));
  return s;
}

}  // namespace

bool parse_grid(const std::string& text, std::array<std::uint64_t, 3>& grid, std::string& why) {
  std::vector<std::int64_t> dims;
  if (!parse_dims(text, dims) || dims.size() > 3) {
    why = "expected X, XxY or XxYxZ";
    return false;
  }
  grid = {1, 1, 1};
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] <= 0 || dims[d] > (std::int64_t{1} << 31)) {
      why = "grid dimensions are 1 to 2^31";
      return false;
    }
    grid[d] = static_cast<std::uint64_t>(dims[d]);
  }
  return true;
}

Launch read_launch(const KernelProgram& kernel, const Params& params, const char* args_key,
                   const std::array<std::uint64_t, 3>& grid) {
  Launch launch;
  launch.config.grid = grid;
  std::string text = params.string(args_key);
  for (char& c : text)
    if (c == ';' || c == ',') c = ' ';
  struct DescValues {
    std::vector<std::int64_t> shape, strides;
    std::int64_t base = 0;
    bool has_shape = false, has_strides = false, has_base = false;
  };
  std::vector<DescValues> descs(kernel.descriptors.size());
  std::map<std::string, std::int64_t, std::less<>> scalars;
  std::vector<std::string> scalar_names, names;
  for (const ScalarArg& a : kernel.scalar_args)
    if (a.desc == kNone) scalar_names.push_back(a.name);
  names = scalar_names;
  for (const DescriptorArg& d : kernel.descriptors)
    for (const char* f : {".shape", ".strides", ".base"}) names.push_back(d.name + f);

  std::istringstream items(text);
  std::string item;
  while (items >> item) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      params.fail(args_key, "bad argument '" + item + "': expected NAME=VALUE");
    const std::string name = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    const auto dot = name.rfind('.');
    bool matched = false;
    for (std::size_t k = 0; k < kernel.descriptors.size() && dot != std::string::npos; ++k) {
      if (name.substr(0, dot) != kernel.descriptors[k].name) continue;
      const std::string field = name.substr(dot + 1);
      DescValues& d = descs[k];
      if (field == "shape" || field == "strides") {
        auto& dims = field == "shape" ? d.shape : d.strides;
        if (!parse_dims(value, dims) || dims.size() != kernel.descriptors[k].block.size())
          params.fail(args_key, "'" + item + "': descriptor " + kernel.descriptors[k].name +
                                    " has rank " +
                                    std::to_string(kernel.descriptors[k].block.size()) +
                                    ": expected " + field + " as AxB...");
        (field == "shape" ? d.has_shape : d.has_strides) = true;
        matched = true;
      } else if (field == "base") {
        if (!parse_integer(value, d.base) || d.base <= 0)
          params.fail(args_key, "'" + item + "': expected a positive address");
        d.has_base = true;
        matched = true;
      }
    }
    if (matched) continue;
    if (std::find(scalar_names.begin(), scalar_names.end(), name) == scalar_names.end())
      params.fail(args_key, "'" + name + "' is not an argument of kernel " + kernel.kernel_name +
                                did_you_mean(name, names));
    std::int64_t v = 0;
    if (!parse_integer(value, v)) params.fail(args_key, "'" + item + "': expected an integer");
    if (!scalars.emplace(name, v).second) params.fail(args_key, "'" + name + "' is given twice");
  }

  for (const ScalarArg& a : kernel.scalar_args) {
    if (a.desc != kNone) continue;
    const auto it = scalars.find(a.name);
    if (it != scalars.end()) launch.config.scalars.emplace_back(a.slot, it->second);
  }

  // Descriptors used by a TMA op need their tensor; the others get a map of one box.
  std::vector<bool> used(kernel.descriptors.size(), false);
  std::vector<Pos> used_at(kernel.descriptors.size());
  for (const Node& n : kernel.nodes)
    if ((n.kind == NodeKind::kTmaLoad || n.kind == NodeKind::kTmaStore) && !used[n.a]) {
      used[n.a] = true;
      used_at[n.a] = n.pos;
    }
  Addr next = kFirstTensorBase;
  for (std::size_t k = 0; k < kernel.descriptors.size(); ++k) {
    const DescriptorArg& arg = kernel.descriptors[k];
    DescValues& d = descs[k];
    const std::size_t rank = arg.block.size();
    if (!d.has_shape) {
      if (used[k])
        params.fail(args_key, "missing descriptor shape: " + arg.name + " (declared at " +
                                  kernel.doc().at(arg.pos).str() + ", loaded at " +
                                  kernel.doc().at(used_at[k]).str() + ") needs " + arg.name +
                                  ".shape=" + dims_hint(arg.block.size()) +
                                  " in args (elements, outermost first; its block is " +
                                  join(arg.block) + ")");
      d.shape = arg.block;
    }
    // Packed unless given (in elements, the outermost first), saturating: the limits' check
    // below refuses what overflows.
    if (!d.has_strides) {
      d.strides.assign(rank, 1);
      for (std::size_t i = rank - 1; i-- > 0;)
        if (__builtin_mul_overflow(d.strides[i + 1], d.shape[i + 1], &d.strides[i]))
          d.strides[i] = std::numeric_limits<std::int64_t>::max();
    }
    // The map in simfa's order (dimension 0 innermost) and bytes; a value no field holds
    // (negative, or past 2^64 bytes) is kept as 0 or the largest, which break the limits.
    TensorMap map;
    map.name = arg.name;
    map.elem_bytes = arg.elem_bytes;
    map.rank = static_cast<std::uint32_t>(rank);
    for (std::size_t i = 0; i < rank; ++i) {
      const std::size_t from = rank - 1 - i;
      map.shape[i] = static_cast<std::uint64_t>(std::max<std::int64_t>(d.shape[from], 0));
      if (__builtin_mul_overflow(
              static_cast<std::uint64_t>(std::max<std::int64_t>(d.strides[from], 0)),
              std::uint64_t{arg.elem_bytes}, &map.stride[i]))
        map.stride[i] = std::numeric_limits<std::uint64_t>::max();
      map.box[i] = static_cast<std::uint32_t>(
          std::clamp<std::int64_t>(arg.block[from], 0, std::numeric_limits<std::uint32_t>::max()));
    }
    map.base = d.has_base ? static_cast<Addr>(d.base) : next;
    // cuTensorMapEncodeTiled's limits, the trace's tensormap statements' check too.
    if (const std::optional<TensorMapFault> fault = tensor_map_fault(map)) {
      switch (fault->part) {
        case TensorMapFault::Part::kBase:
          params.fail(args_key,
                      arg.name + ".base=" + std::to_string(d.base) + ": " + fault->message);
        case TensorMapFault::Part::kShape:
          params.fail(args_key, arg.name + ".shape=" + join(d.shape) + ": " + fault->message);
        case TensorMapFault::Part::kStride:
          params.fail(args_key, arg.name +
                                    (d.has_strides ? ".strides=" + join(d.strides)
                                                   : ".shape=" + join(d.shape) + " (packed)") +
                                    ": " + fault->message);
        case TensorMapFault::Part::kBox:
          params.fail(args_key, arg.name + " (declared at " + kernel.doc().at(arg.pos).str() +
                                    "), block " + join(arg.block) + ": " + fault->message);
      }
    }
    // The bytes it spans, and the next tensor's base.
    std::uint64_t extent = 1;
    for (std::size_t i = 0; i < rank; ++i)
      extent +=
          static_cast<std::uint64_t>(d.shape[i] - 1) * static_cast<std::uint64_t>(d.strides[i]);
    extent *= arg.elem_bytes;
    next = next_tensor_base(map.base, extent);
    launch.maps.push_back(map);
    for (const ScalarArg& a : kernel.scalar_args)
      if (a.desc == k)
        launch.config.scalars.emplace_back(
            a.slot, a.field < rank ? d.shape[a.field] : d.strides[a.field - rank]);
  }
  return launch;
}

}  // namespace simfa::ttgir
