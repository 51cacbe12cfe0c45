#include "ttgir_syntax.h"

#include <charconv>

#include "simfa/int_math.h"

namespace simfa::ttgir {

namespace {

// "128x64xf16" -> {128, 64}, "f16"; "i32" -> {}, "i32".
bool split_shape(std::string_view text, std::vector<std::int64_t>& shape, std::string_view& elem) {
  shape.clear();
  for (;;) {
    const std::size_t x = text.find('x');
    if (x == std::string_view::npos || x == 0) break;
    std::int64_t d = 0;
    if (!parse_integer_literal(text.substr(0, x), d)) break;
    shape.push_back(d);
    text.remove_prefix(x + 1);
  }
  elem = text;
  return !elem.empty();
}

bool opens(Tok k) {
  return k == Tok::kLParen || k == Tok::kLBracket || k == Tok::kLAngle || k == Tok::kLBrace;
}
bool closes(Tok k) {
  return k == Tok::kRParen || k == Tok::kRBracket || k == Tok::kRAngle || k == Tok::kRBrace;
}

// Skips one balanced bracket group starting at `i` (at an opener).
void skip_group(const std::vector<Token>& t, std::uint32_t& i, std::uint32_t end) {
  int depth = 0;
  do {
    if (opens(t[i].kind)) ++depth;
    if (closes(t[i].kind)) --depth;
    ++i;
  } while (i < end && depth > 0);
}

// `key = [a, b, c]` in tokens [begin, end).
std::vector<std::int64_t> int_list(const MlirDocument& doc, TokenRange r, std::string_view key) {
  std::vector<std::int64_t> out;
  for (std::uint32_t i = r.begin; i + 2 < r.end; ++i) {
    if (doc.token(i).kind != Tok::kIdent || doc.token(i).text != key ||
        doc.token(i + 1).kind != Tok::kEqual || doc.token(i + 2).kind != Tok::kLBracket)
      continue;
    for (std::uint32_t j = i + 3; j < r.end && doc.token(j).kind != Tok::kRBracket; ++j) {
      std::int64_t v = 0;
      if (doc.token(j).kind == Tok::kInteger && parse_integer_literal(doc.token(j).text, v))
        out.push_back(v);
    }
    break;
  }
  return out;
}

std::optional<std::int64_t> int_attr(const MlirDocument& doc, TokenRange r, std::string_view key) {
  for (std::uint32_t i = r.begin; i + 2 < r.end; ++i) {
    std::int64_t v = 0;
    if (doc.token(i).kind == Tok::kIdent && doc.token(i).text == key &&
        doc.token(i + 1).kind == Tok::kEqual && doc.token(i + 2).kind == Tok::kInteger &&
        parse_integer_literal(doc.token(i + 2).text, v))
      return v;
  }
  return std::nullopt;
}

}  // namespace

bool parse_integer_literal(std::string_view text, std::int64_t& out) {
  int base = 10;
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  if (text.size() > 2 && text[0] == '0' && text[1] == 'x') {
    base = 16;
    text.remove_prefix(2);
  }
  std::uint64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return false;
  // Negating in uint64 and converting (modular since C++20): -INT64_MIN, which overflowed as
  // an int64 negation, is out of reach.
  if (negative && v > std::uint64_t{1} << 63) return false;
  out = static_cast<std::int64_t>(negative ? 0 - v : v);
  return true;
}

std::string canonical_name(std::string_view name) {
  std::string n(name);
  auto replace_prefix = [&](std::string_view from, std::string_view to) {
    if (n.starts_with(from)) n = std::string(to) + n.substr(from.size());
  };
  replace_prefix("triton_gpu.", "ttg.");
  replace_prefix("triton_nvidia_gpu.", "ttng.");
  if (n == "ttg.memdesc_subview") return "ttg.memdesc_index";
  if (n == "ttng.dot_async") return "ttng.warp_group_dot";
  if (n == "ttng.dot_wait") return "ttng.warp_group_dot_wait";
  return n;
}

std::uint64_t TypeInfo::elements() const {
  std::uint64_t n = 1;
  for (auto d : shape) n *= static_cast<std::uint64_t>(d > 0 ? d : 0);
  return n;
}

std::uint32_t element_bytes(std::string_view e) {
  if (e == "f16" || e == "bf16" || e == "i16") return 2;
  if (e == "f32" || e == "i32" || e == "tf32") return 4;
  if (e == "f64" || e == "i64") return 8;
  if (e == "i8" || e == "i1" || e.starts_with("f8")) return 1;
  return 0;
}

std::uint32_t integer_width(std::string_view e) {
  if (e == "index") return 64;
  if (e.size() < 2 || e[0] != 'i') return 0;
  std::int64_t w = 0;
  return parse_integer_literal(e.substr(1), w) && w > 0 && w <= 64 ? static_cast<std::uint32_t>(w)
                                                                   : 0;
}

std::string dtype_name(std::string_view e) {
  if (e == "f16") return "FP16";
  if (e == "bf16") return "BF16";
  if (e == "f32") return "FP32";
  if (e == "f64") return "FP64";
  if (e == "f8E4M3FN" || e == "f8E4M3FNUZ") return "FP8E4M3";
  if (e == "f8E5M2" || e == "f8E5M2FNUZ") return "FP8E5M2";
  if (integer_width(e) != 0 && e != "index") return "INT" + std::string(e.substr(1));
  std::string up(e);
  for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return up;
}

void OpView::fail(const std::string& message) const {
  doc_->fail(op_->pos, "'" + std::string(op_->name) + "': " + message);
}

std::vector<std::uint32_t> OpView::values(std::size_t seg) const {
  std::vector<std::uint32_t> out;
  if (seg >= op_->segments.size()) return out;
  for (std::uint32_t i = op_->segments[seg].begin; i < op_->segments[seg].end; ++i)
    if (doc_->token(i).kind == Tok::kValue) out.push_back(i);
  return out;
}

std::string_view OpView::keyword() const {
  const TokenRange r = op_->segments.front();
  return r.empty() || doc_->token(r.begin).kind != Tok::kIdent ? std::string_view()
                                                               : doc_->token(r.begin).text;
}

std::optional<std::int64_t> OpView::attr_int(std::string_view key) const {
  for (const TokenRange& r : op_->segments)
    if (auto v = int_attr(*doc_, r, key)) return v;
  return std::nullopt;
}

std::optional<bool> OpView::attr_bool(std::string_view key) const {
  for (const TokenRange& r : op_->segments)
    for (std::uint32_t i = r.begin; i + 2 < r.end; ++i)
      if (doc_->token(i).kind == Tok::kIdent && doc_->token(i).text == key &&
          doc_->token(i + 1).kind == Tok::kEqual && doc_->token(i + 2).kind == Tok::kIdent &&
          (doc_->token(i + 2).text == "true" || doc_->token(i + 2).text == "false"))
        return doc_->token(i + 2).text == "true";
  return std::nullopt;
}

std::vector<std::int64_t> OpView::integers() const {
  std::vector<std::int64_t> out;
  const TokenRange r = op_->segments.front();
  int depth = 0;
  for (std::uint32_t i = r.begin; i < r.end; ++i) {
    const Token& t = doc_->token(i);
    if (opens(t.kind)) ++depth;
    if (closes(t.kind)) --depth;
    if (depth == 0 && t.kind == Tok::kColon) break;
    std::int64_t v = 0;
    if (depth == 0 && t.kind == Tok::kInteger && parse_integer_literal(t.text, v)) out.push_back(v);
  }
  return out;
}

TypeInfo OpView::type_at(std::uint32_t& i) const {
  const auto& t = doc_->tokens;
  TypeInfo info;
  const Token& head = t[i];
  auto body = [&](auto&& inside) {  // `<` ... `>` after the head
    ++i;
    if (t[i].kind != Tok::kLAngle) return;
    const std::uint32_t open = i;
    std::uint32_t close = open;
    skip_group(t, close, static_cast<std::uint32_t>(t.size()));
    inside(open + 1, close - 1);
    i = close;
  };
  auto shaped = [&](std::uint32_t b, std::uint32_t e) {
    if (b < e && t[b].kind == Tok::kIdent) {
      split_shape(t[b].text, info.shape, info.elem);
      std::int64_t elements = 1;
      for (const std::int64_t d : info.shape) {
        if (d < 1 || d > kMaxTypeElements / elements)
          doc_->fail(t[b].pos, "shape '" + std::string(t[b].text) +
                                   "': dimensions are 1 or more and hold at most " +
                                   std::to_string(kMaxTypeElements) + " elements");
        elements *= d;
      }
    }
    for (std::uint32_t j = b + 1; j < e; ++j)
      if (t[j].kind == Tok::kComma && j + 1 < e && t[j + 1].kind == Tok::kHashId) {
        info.encoding_token = j + 1;
        break;
      }
  };
  if (head.kind == Tok::kIdent && head.text == "tensor") {
    info.kind = TypeKind::kTensor;
    body(shaped);
  } else if (head.kind == Tok::kBangId && (canonical_name(head.text.substr(1)) == "ttg.memdesc" ||
                                           head.text == "!tt.memdesc")) {  // Triton <= 3.1
    info.kind = TypeKind::kMemdesc;
    body(shaped);
  } else if (head.kind == Tok::kBangId && head.text == "!tt.tensordesc") {
    info.kind = TypeKind::kTensorDesc;
    body([&](std::uint32_t b, std::uint32_t) {
      std::uint32_t j = b;
      if (t[j].kind == Tok::kIdent && t[j].text == "tensor") {
        const TypeInfo inner = type_at(j);
        info.shape = inner.shape;
        info.elem = inner.elem;
      }
    });
  } else if (head.kind == Tok::kBangId && head.text == "!tt.ptr") {
    info.kind = TypeKind::kPtr;
    body([&](std::uint32_t b, std::uint32_t) {
      if (t[b].kind == Tok::kIdent) info.elem = t[b].text;
    });
  } else if (head.kind == Tok::kIdent) {
    info.kind = TypeKind::kScalar;
    info.elem = head.text;
    ++i;
  } else {
    info.kind = TypeKind::kOther;
    ++i;
    if (t[i].kind == Tok::kLAngle) skip_group(t, i, static_cast<std::uint32_t>(t.size()));
  }
  return info;
}

std::vector<TypeInfo> OpView::types(std::optional<std::size_t> seg) const {
  std::vector<TypeInfo> out;
  const TokenRange r = op_->segments[seg ? *seg : op_->segments.size() - 1];
  std::uint32_t i = r.begin;
  int depth = 0;
  for (; i < r.end; ++i) {  // the top-level ':'
    const Token& t = doc_->token(i);
    if (opens(t.kind)) ++depth;
    // A generic op's last segment starts with the `})` that closes its region list.
    if (closes(t.kind) && depth > 0) --depth;
    if (depth == 0 && t.kind == Tok::kColon) break;
  }
  for (++i; i < r.end;) {
    const Token& t = doc_->token(i);
    if (t.kind == Tok::kIdent && t.text == "loc" && i + 1 < r.end &&
        doc_->token(i + 1).kind == Tok::kLParen)
      break;
    if (t.kind == Tok::kLParen || t.kind == Tok::kRParen || t.kind == Tok::kComma ||
        t.kind == Tok::kArrow || t.kind == Tok::kStar ||
        (t.kind == Tok::kIdent && t.text == "to")) {
      ++i;
      continue;
    }
    out.push_back(type_at(i));
  }
  return out;
}

LayoutRef layout_at(const MlirDocument& doc, std::uint32_t encoding_token) {
  LayoutRef out;
  if (encoding_token == 0) return out;
  const Token& enc = doc.token(encoding_token);
  out.tokens = TokenRange{encoding_token, static_cast<std::uint32_t>(doc.tokens.size())};
  std::string_view what = enc.text;
  if (const Alias* a = doc.alias(enc.text)) {
    out.tokens = a->value;
    what = doc.token(out.tokens.begin).text;
  } else {
    std::uint32_t e = encoding_token + 1;
    if (doc.token(e).kind == Tok::kLAngle) skip_group(doc.tokens, e, out.tokens.end);
    out.tokens.end = e;
  }
  out.name = canonical_name(what.substr(what.starts_with('#') ? 1 : 0));
  return out;
}

std::optional<std::int64_t> layout_int(const MlirDocument& doc, const LayoutRef& layout,
                                       std::string_view key) {
  return int_attr(doc, layout.tokens, key);
}

MmaLayout mma_layout(const MlirDocument& doc, std::uint32_t encoding_token, Pos where) {
  if (encoding_token == 0) doc.fail(where, "the accumulator has no layout encoding");
  const Token& enc = doc.token(encoding_token);
  const LayoutRef layout = layout_at(doc, encoding_token);
  const TokenRange r = layout.tokens;
  if (layout.name != "ttg.nvidia_mma")
    doc.fail(where, "the accumulator layout " + std::string(enc.text) +
                        " is not an NVIDIA MMA layout (#ttg.nvidia_mma)");
  const auto version = int_attr(doc, r, "versionMajor");
  if (!version || *version != 3)
    doc.fail(where, "the accumulator layout " + std::string(enc.text) +
                        " is not a Hopper WGMMA layout (versionMajor = 3)");
  const auto warps = int_list(doc, r, "warpsPerCTA");
  const auto instr = int_list(doc, r, "instrShape");
  if (warps.size() != 2 || instr.size() != 3 || warps[0] <= 0 || warps[1] <= 0 || instr[0] <= 0 ||
      instr[1] <= 0 || instr[2] <= 0)
    doc.fail(where, "the layout " + std::string(enc.text) +
                        " lacks warpsPerCTA = [m, n] or instrShape = [16, n, k]");
  if (warps[0] % 4 != 0)
    doc.fail(where, "warpsPerCTA = [" + std::to_string(warps[0]) + ", " + std::to_string(warps[1]) +
                        "] puts fewer than 4 warps along M: not a WarpGroup-level WGMMA layout");
  MmaLayout m;
  m.warps_m = static_cast<std::uint32_t>(warps[0]);
  m.warps_n = static_cast<std::uint32_t>(warps[1]);
  for (int d = 0; d < 3; ++d) m.instr[d] = static_cast<std::uint32_t>(instr[d]);
  return m;
}

std::uint32_t DotShape::per_warpgroup() const {
  return static_cast<std::uint32_t>(ceil_div(m, instr_m) * ceil_div(n, instr_n) *
                                    ceil_div(k, instr_k));
}

DotShape dot_shape(const OpView& dot) {
  const std::vector<TypeInfo> types = dot.types();
  if (types.size() < 3) dot.fail("expected the types 'A * B -> C'");
  const TypeInfo& a = types[0];
  const TypeInfo& c = types.back();
  if (a.shape.size() != 2 || c.shape.size() != 2 || c.kind != TypeKind::kTensor)
    dot.fail("expected 2-D operands and a 2-D tensor result");
  DotShape s;
  s.m = c.shape[0];
  s.n = c.shape[1];
  s.k = a.shape[1];
  s.layout = mma_layout(dot.doc(), c.encoding_token, dot.pos());
  s.instr_m = std::int64_t{s.layout.instr[0]} * s.layout.warps_m;
  s.instr_n = std::int64_t{s.layout.instr[1]} * s.layout.warps_n;
  s.instr_k = s.layout.instr[2];
  s.dtype = dtype_name(a.elem);
  s.acc = dtype_name(c.elem);
  s.acc_bytes = element_bytes(c.elem);
  s.register_a = a.kind == TypeKind::kTensor;
  s.is_async = dot.attr_bool("isAsync").value_or(false);
  return s;
}

std::uint64_t DescBlock::bytes() const {
  std::uint64_t n = element_bytes(elem);
  for (auto d : shape) n *= static_cast<std::uint64_t>(d);
  return n;
}

DescBlock desc_block(const OpView& op, const TypeInfo& t) {
  if (t.kind != TypeKind::kTensorDesc || t.shape.empty() || element_bytes(t.elem) == 0)
    op.fail("expected a !tt.tensordesc<tensor<...>> descriptor type first in its type list");
  return {t.shape, t.elem};
}

}  // namespace simfa::ttgir
