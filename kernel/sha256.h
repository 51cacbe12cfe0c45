// SHA-256 (FIPS 180-4), for the resolved-manifest hash written into every stats file.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace simfa::kernel {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256();
  void update(std::string_view data);
  /// Pads and returns the digest; the object must not be updated afterwards.
  Digest finish();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

/// Lower-case hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace simfa::kernel
