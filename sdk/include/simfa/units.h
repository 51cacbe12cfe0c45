// Parsing of quantities written with units in manifests: sizes ("50MiB"), frequencies
// ("1830MHz") and bandwidths ("3.35TB/s"). Decimal prefixes are powers of 1000, binary ones
// (KiB, MiB, GiB) powers of 1024. Returns false on anything it does not understand.
#pragma once

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace simfa::units {

namespace detail {
inline bool split_number(std::string_view text, double& value, std::string& unit) {
  std::string s(text);
  char* end = nullptr;
  value = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return false;
  std::string_view rest(end);
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
  unit = std::string(rest);
  return true;
}

struct Scale {
  std::string_view suffix;
  double factor;
};

template <std::size_t N>
inline bool lookup(const Scale (&table)[N], const std::string& unit, double& factor) {
  for (const auto& s : table) {
    if (unit == s.suffix) {
      factor = s.factor;
      return true;
    }
  }
  return false;
}
}  // namespace detail

/// "228KiB", "50MB", "128B", "4096" -> bytes.
inline bool parse_size(std::string_view text, std::int64_t& bytes) {
  static constexpr detail::Scale kTable[] = {
      {"", 1},       {"B", 1},     {"KB", 1e3},         {"MB", 1e6},
      {"GB", 1e9},   {"KiB", 1024}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}};
  double value = 0, factor = 0;
  std::string unit;
  if (!detail::split_number(text, value, unit) || !detail::lookup(kTable, unit, factor)) return false;
  double b = value * factor;
  if (b < 0 || b > 9.2e18) return false;
  bytes = static_cast<std::int64_t>(b + 0.5);
  return true;
}

/// "1830MHz", "1.83GHz" -> MHz.
inline bool parse_frequency_mhz(std::string_view text, double& mhz) {
  static constexpr detail::Scale kTable[] = {
      {"Hz", 1e-6}, {"kHz", 1e-3}, {"KHz", 1e-3}, {"MHz", 1}, {"GHz", 1e3}};
  double value = 0, factor = 0;
  std::string unit;
  if (!detail::split_number(text, value, unit) || !detail::lookup(kTable, unit, factor)) return false;
  mhz = value * factor;
  return true;
}

/// "3.35TB/s", "900GB/s" -> bytes per second.
inline bool parse_bandwidth(std::string_view text, double& bytes_per_second) {
  static constexpr detail::Scale kTable[] = {{"B/s", 1},     {"KB/s", 1e3},       {"MB/s", 1e6},
                                             {"GB/s", 1e9},  {"TB/s", 1e12},      {"KiB/s", 1024},
                                             {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0}};
  double value = 0, factor = 0;
  std::string unit;
  if (!detail::split_number(text, value, unit) || !detail::lookup(kTable, unit, factor)) return false;
  bytes_per_second = value * factor;
  return true;
}

}  // namespace simfa::units
