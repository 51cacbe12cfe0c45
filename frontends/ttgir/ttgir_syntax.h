// Reading the parts of a TTGIR operation the frontend needs: operand names, attributes, types
// (tensor, memdesc, tensordesc shapes and element types) and the NVIDIA MMA layout behind a
// warp_group_dot. Spelling drift between Triton versions is absorbed here (canonical_name).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlir_text.h"

namespace simfa::ttgir {

/// The name Triton 3.6 uses for `name`: dialect prefixes of older versions (`triton_gpu.`,
/// `triton_nvidia_gpu.`) and renamed ops (`ttg.memdesc_subview` -> `ttg.memdesc_index`,
/// `ttng.dot_async` -> `ttng.warp_group_dot`, `ttng.dot_wait` -> `ttng.warp_group_dot_wait`).
std::string canonical_name(std::string_view name);

/// An MLIR integer literal: decimal or 0x hex, optionally negative. A magnitude beyond int64's
/// keeps its 64-bit pattern (0xFFFFFFFFFFFFFFFF is -1); false when it is no integer or a negative
/// one below INT64_MIN.
bool parse_integer_literal(std::string_view text, std::int64_t& out);

/// Elements a tensor or memdesc type may hold: 16 x Triton's TRITON_MAX_TENSOR_NUMEL (2^20), so
/// products of a shape's dimensions cannot overflow.
inline constexpr std::int64_t kMaxTypeElements = std::int64_t{1} << 24;

enum class TypeKind : std::uint8_t { kNone, kScalar, kTensor, kMemdesc, kTensorDesc, kPtr, kOther };

struct TypeInfo {
  TypeKind kind = TypeKind::kNone;
  std::vector<std::int64_t> shape;   ///< outermost first, as written
  std::string_view elem;             ///< "f16", "i64"
  std::uint32_t encoding_token = 0;  ///< the first encoding's token ("#mma"); 0: none

  std::uint64_t elements() const;
};

/// Bytes of one element of `elem` ("f16" -> 2); 0 when unknown.
std::uint32_t element_bytes(std::string_view elem);
/// Bit width of an integer scalar type ("i32" -> 32, "index" -> 64); 0 when not an integer.
std::uint32_t integer_width(std::string_view elem);
/// The dtype a marker names: f16 -> FP16, bf16 -> BF16, f8E4M3FN -> FP8E4M3, i8 -> INT8, ...
std::string dtype_name(std::string_view elem);

/// Read access to one operation of a parsed document.
class OpView {
 public:
  OpView(const MlirDocument& doc, const Operation& op) : doc_(&doc), op_(&op) {}

  const Operation& op() const { return *op_; }
  const MlirDocument& doc() const { return *doc_; }
  Pos pos() const { return op_->pos; }
  [[noreturn]] void fail(const std::string& message) const;

  /// Token indices of the values used in segment `seg` (0: before the first region), in order.
  std::vector<std::uint32_t> values(std::size_t seg = 0) const;
  /// The first bare word after the name ("sgt" of arith.cmpi, "x" of tt.get_program_id).
  std::string_view keyword() const;
  /// `key = INTEGER` / `key = true|false` anywhere in the op's own text.
  std::optional<std::int64_t> attr_int(std::string_view key) const;
  std::optional<bool> attr_bool(std::string_view key) const;
  /// The integer literals of segment 0 before its type list (e.g. the bytes of barrier_expect).
  std::vector<std::int64_t> integers() const;
  /// The types after the top-level ':' of the op's last segment (or of `seg`), in order;
  /// `(`, `)`, `,`, `->`, `*` and `to` separate them.
  std::vector<TypeInfo> types(std::optional<std::size_t> seg = std::nullopt) const;
  /// Parses the type starting at token `i` (advanced past it).
  TypeInfo type_at(std::uint32_t& i) const;

 private:
  const MlirDocument* doc_;
  const Operation* op_;
};

/// Hopper's NVIDIA MMA (v3) layout: the warps of the CTA (or partition) along M and N, and the
/// per-warp instruction shape [16, n, k].
struct MmaLayout {
  std::uint32_t warps_m = 0;
  std::uint32_t warps_n = 0;
  std::uint32_t instr[3] = {0, 0, 0};
};

/// A layout attribute: its name with the dialect canonical ("ttg.nvidia_mma", "ttg.dot_op",
/// "ttg.blocked"; aliases such as `#mma` resolved) and the tokens of its definition.
struct LayoutRef {
  std::string name;  ///< "" when the type has no encoding
  TokenRange tokens;
};
LayoutRef layout_at(const MlirDocument& doc, std::uint32_t encoding_token);
/// An integer field of the layout (`opIdx = 0`), if it has one.
std::optional<std::int64_t> layout_int(const MlirDocument& doc, const LayoutRef& layout,
                                       std::string_view key);

/// The layout named by the encoding at token `encoding_token` (an alias such as `#mma` or an
/// inline `#ttg.nvidia_mma<{...}>`). Throws InputError at `where` when it is not a v3 MMA layout.
MmaLayout mma_layout(const MlirDocument& doc, std::uint32_t encoding_token, Pos where);

/// Everything a `ttng.warp_group_dot` says about its WGMMA instructions (the paper's Stage 2
/// marker fields).
struct DotShape {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t instr_m = 0;  ///< rows one round of instructions covers in the CTA: 16 * warps_m
  std::int64_t instr_n = 0;  ///< columns likewise: n of the instruction * warps_n
  std::int64_t instr_k = 0;
  MmaLayout layout;
  std::string dtype;            ///< of A
  std::string acc;              ///< of the accumulator
  std::uint32_t acc_bytes = 0;  ///< of an accumulator element
  bool register_a = false;      ///< mode RS (A from registers) rather than SS
  bool is_async = false;

  /// WGMMA instructions each WarpGroup issues: ceil(M/instrM) * ceil(N/instrN) * ceil(K/instrK).
  std::uint32_t per_warpgroup() const;
  /// The m64nNkK instruction each of them is.
  std::uint32_t wgmma_m() const { return 4 * layout.instr[0]; }
  std::uint32_t wgmma_n() const { return layout.instr[1]; }
  std::uint32_t wgmma_k() const { return layout.instr[2]; }
};

DotShape dot_shape(const OpView& dot);

/// A tensor descriptor type's block: `!tt.tensordesc<tensor<128x64xf16, ...>>`.
struct DescBlock {
  std::vector<std::int64_t> shape;
  std::string_view elem;
  std::uint64_t bytes() const;
};

DescBlock desc_block(const OpView& op, const TypeInfo& desc_type);

}  // namespace simfa::ttgir
