#include "hbm3_address_map.h"

#include <bit>
#include <stdexcept>

namespace simfa::memory_models {

namespace {
int log2_if_power_of_two(std::uint64_t v) {
  return std::has_single_bit(v) ? std::countr_zero(v) : -1;
}
}  // namespace

Hbm3AddressMap::Hbm3AddressMap(std::string_view mapping, const Hbm3Organization& o,
                               std::uint32_t interleave_bytes)
    : interleave_bytes_(interleave_bytes),
      interleave_shift_(log2_if_power_of_two(interleave_bytes)),
      channels_per_stack_(static_cast<std::uint32_t>(o.channels_per_stack)) {
  const auto row_bytes = static_cast<std::uint64_t>(o.burst_bytes()) * static_cast<std::uint64_t>(o.columns);
  struct Name {
    std::string_view text;
    Field field;
    std::uint64_t count;
  };
  const Name names[] = {
      {"Co", Field::kCo, row_bytes / interleave_bytes},
      {"Ba", Field::kBa, static_cast<std::uint64_t>(o.banks_per_group)},
      {"Bg", Field::kBg, static_cast<std::uint64_t>(o.bank_groups)},
      {"Pc", Field::kPc, static_cast<std::uint64_t>(o.pseudo_channels)},
      {"Ch", Field::kCh, static_cast<std::uint64_t>(o.channels_per_stack)},
      {"St", Field::kSt, static_cast<std::uint64_t>(o.stacks)},
  };
  const std::string expected =
      "address_mapping '" + std::string(mapping) +
      "' must list each of Ro, Co, Ba, Bg, Pc, Ch, St once, most significant first, starting "
      "with Ro (e.g. 'RoCoBaBgStChPc')";
  if (mapping.size() != 14 || mapping.substr(0, 2) != "Ro") throw std::invalid_argument(expected);
  bool seen[std::size(names)] = {};
  for (std::size_t i = 0; i < digits_.size(); ++i) {
    // Digit i (least significant first) is the field written i places from the end.
    const std::string_view token = mapping.substr(mapping.size() - 2 * (i + 1), 2);
    std::size_t k = 0;
    while (k < std::size(names) && names[k].text != token) ++k;
    if (k == std::size(names) || seen[k]) throw std::invalid_argument(expected);
    seen[k] = true;
    digits_[i] = {names[k].field, names[k].count, log2_if_power_of_two(names[k].count)};
  }
}

DramLocation Hbm3AddressMap::locate(Addr address) const {
  std::uint64_t granule =
      interleave_shift_ >= 0 ? address >> interleave_shift_ : address / interleave_bytes_;
  DramLocation at;
  std::uint32_t stack = 0, channel = 0;
  for (const Digit& d : digits_) {
    // Power-of-two fields (most of them) are bit slices: no division.
    std::uint32_t value;
    if (d.shift >= 0) {
      value = static_cast<std::uint32_t>(granule & (d.count - 1));
      granule >>= d.shift;
    } else {
      value = static_cast<std::uint32_t>(granule % d.count);
      granule /= d.count;
    }
    switch (d.field) {
      case Field::kCo: break;  // columns of one row share its timing: only the row matters
      case Field::kBa: at.bank = value; break;
      case Field::kBg: at.bank_group = value; break;
      case Field::kPc: at.pseudo_channel = value; break;
      case Field::kCh: channel = value; break;
      case Field::kSt: stack = value; break;
    }
  }
  at.channel = stack * channels_per_stack_ + channel;
  at.row = granule;
  return at;
}

}  // namespace simfa::memory_models
