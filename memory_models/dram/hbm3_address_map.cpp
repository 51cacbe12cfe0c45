#include "hbm3_address_map.h"

#include <bit>
#include <iterator>
#include <stdexcept>

namespace simfa::memory_models {

namespace {

int log2_if_power_of_two(std::uint64_t v) {
  return std::has_single_bit(v) ? std::countr_zero(v) : -1;
}

// The widest hashed unit: the degree of the last polynomial.
constexpr int kMaxUnitBits = static_cast<int>(std::size(kHbm3HashPolynomials)) - 1;
// An odd digit is shifted by a residue of this many bits, then reduced modulo its count: many
// more values than the odd factors of real stack counts (3, 5), so the shift is near uniform.
constexpr int kOddResidueBits = 8;

}  // namespace

Hbm3AddressMap::Hbm3AddressMap(std::string_view mapping, const Hbm3Organization& o,
                               std::uint32_t interleave_bytes, Hbm3AddressHash hash)
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
  std::array<Digit, kFields> digits{};
  for (std::size_t i = 0; i < digits.size(); ++i) {
    // Digit i (least significant first) is the field written i places from the end.
    const std::string_view token = mapping.substr(mapping.size() - 2 * (i + 1), 2);
    std::size_t k = 0;
    while (k < std::size(names) && names[k].text != token) ++k;
    if (k == std::size(names) || seen[k]) throw std::invalid_argument(expected);
    seen[k] = true;
    digits[i] = {names[k].field, names[k].count};
  }
  if (hash == Hbm3AddressHash::kNone)
    slice(digits);
  else
    this->hash(digits);
}

void Hbm3AddressMap::slice(const std::array<Digit, kFields>& digits) {
  for (const Digit& d : digits) {
    add_unit(d.count, 0);
    add_part(Part{d.field, 0, 0, ~std::uint32_t{0}});
  }
}

void Hbm3AddressMap::hash(const std::array<Digit, kFields>& digits) {
  // The open run of power-of-two digits of one level: its parts and its width.
  std::array<Part, kFields> run{};
  std::size_t run_size = 0;
  int run_bits = 0;
  bool run_channel_level = false;
  std::size_t co_index = 0;
  while (digits[co_index].field != Field::kCo) ++co_index;
  // The product of the digits above digit `i` and below Co (1 when Co is not above it).
  const auto below_co = [&](std::size_t i) {
    std::uint64_t product = 1;
    for (std::size_t j = i + 1; j < co_index; ++j) product *= digits[j].count;
    return product;
  };
  std::size_t run_top = 0;  // the digit index of the run's last part
  const auto close_run = [&] {
    if (run_size == 0) return;
    add_unit(std::uint64_t{1} << run_bits, run_bits);
    if (!run_channel_level && run_top < co_index) {
      units_[unit_count_ - 1].below_co = below_co(run_top);
      units_[unit_count_ - 1].co = digits[co_index].count;
    }
    for (std::size_t i = 0; i < run_size; ++i) add_part(run[i]);
    run_size = 0;
    run_bits = 0;
  };
  for (std::size_t i = 0; i < digits.size(); ++i) {
    const Digit& d = digits[i];
    if (d.field == Field::kCo) {  // a place in the row: nothing to spread
      close_run();
      add_unit(d.count, 0);
      add_part(Part{d.field, 0, 0, ~std::uint32_t{0}});
      continue;
    }
    const int e = std::countr_zero(d.count);
    const std::uint64_t odd = d.count >> e;
    const bool channel_level =
        d.field == Field::kPc || d.field == Field::kCh || d.field == Field::kSt;
    if (e > 0) {
      if (run_size > 0 && (channel_level != run_channel_level || run_bits + e > kMaxUnitBits))
        close_run();
      run[run_size++] =
          Part{d.field, static_cast<std::uint8_t>(run_bits), 0, (std::uint32_t{1} << e) - 1};
      run_top = i;
      run_bits += e;
      run_channel_level = channel_level;
    }
    if (odd > 1) {  // above the power-of-two part: field value = pow2 part + 2^e x odd part
      close_run();
      add_unit(odd, kOddResidueBits);
      add_part(Part{d.field, 0, static_cast<std::uint8_t>(e), ~std::uint32_t{0}});
    }
  }
  close_run();
}

void Hbm3AddressMap::add_unit(std::uint64_t count, int residue_bits) {
  units_[unit_count_] = Unit{.count = count,
                             .shift = log2_if_power_of_two(count),
                             .residue = residue_bits > 0 ? residue_table(residue_bits) : -1,
                             .first_part = part_count_,
                             .end_part = part_count_};
  ++unit_count_;
}

void Hbm3AddressMap::add_part(const Part& part) {
  parts_[part_count_++] = part;
  units_[unit_count_ - 1].end_part = part_count_;
}

int Hbm3AddressMap::residue_table(int bits) {
  for (std::size_t i = 0; i < residue_bits_.size(); ++i)
    if (residue_bits_[i] == bits) return static_cast<int>(i);
  const std::uint32_t p = kHbm3HashPolynomials[bits], top = std::uint32_t{1} << bits;
  // column[j] = x^(W + j) mod P: x^W mod P is P without its top term; each next one is times x.
  std::array<std::uint32_t, 64> column{};
  std::uint32_t c = p ^ top;
  for (std::uint32_t& v : column) {
    v = c;
    c <<= 1;
    if (c & top) c ^= p;
  }
  ResidueTable& t = residues_.emplace_back();
  for (std::size_t i = 0; i < t.size(); ++i)
    for (std::size_t b = 0; b < t[i].size(); ++b) {
      std::uint32_t r = 0;
      for (std::size_t k = 0; k < 8; ++k)
        if (b >> k & 1) r ^= column[8 * i + k];
      t[i][b] = static_cast<std::uint16_t>(r);
    }
  residue_bits_.push_back(bits);
  return static_cast<int>(residue_bits_.size() - 1);
}

std::uint32_t Hbm3AddressMap::residue(const ResidueTable& table, std::uint64_t key) {
  // Linear over GF(2): the XOR of each byte's residue at its place.
  std::uint32_t r = 0;
  for (std::size_t i = 0; key != 0; ++i, key >>= 8) r ^= table[i][key & 0xff];
  return r;
}

DramLocation Hbm3AddressMap::locate(Addr address) const {
  std::uint64_t granule =
      interleave_shift_ >= 0 ? address >> interleave_shift_ : address / interleave_bytes_;
  std::array<std::uint32_t, kFields> fields{};
  for (std::size_t u = 0; u < unit_count_; ++u) {
    const Unit& unit = units_[u];
    // Power-of-two units (most of them) are bit slices: no division.
    std::uint32_t value;
    if (unit.shift >= 0) {
      value = static_cast<std::uint32_t>(granule & (unit.count - 1));
      granule >>= unit.shift;
    } else {
      value = static_cast<std::uint32_t>(granule % unit.count);
      granule /= unit.count;
    }
    // Hashed by what is left above it, which no unit changes.
    if (unit.residue >= 0) {
      const std::uint64_t key = unit.co == 1 ? granule
                                             : granule / (unit.below_co * unit.co) * unit.below_co +
                                                   granule % unit.below_co;
      const std::uint32_t r = residue(residues_[static_cast<std::size_t>(unit.residue)], key);
      value = unit.shift >= 0 ? value ^ r : static_cast<std::uint32_t>((value + r) % unit.count);
    }
    for (std::size_t p = unit.first_part; p < unit.end_part; ++p) {
      const Part& part = parts_[p];
      fields[static_cast<std::size_t>(part.field)] |= (value >> part.at & part.mask)
                                                      << part.field_shift;
    }
  }
  const auto field = [&](Field f) { return fields[static_cast<std::size_t>(f)]; };
  DramLocation at;
  at.channel = field(Field::kSt) * channels_per_stack_ + field(Field::kCh);
  at.pseudo_channel = field(Field::kPc);
  at.bank_group = field(Field::kBg);
  at.bank = field(Field::kBa);
  at.column_group = field(Field::kCo);
  at.row = granule;
  return at;
}

}  // namespace simfa::memory_models
