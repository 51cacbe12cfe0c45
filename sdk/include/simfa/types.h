// Basic scalar types shared by every simfa component.
#pragma once

#include <cstdint>

#if defined(__GNUC__)
#define SIMFA_API __attribute__((visibility("default")))
#else
#define SIMFA_API
#endif

namespace simfa {

/// Simulated time in SM clock cycles.
using Cycle = std::uint64_t;
/// A global (device) memory byte address.
using Addr = std::uint64_t;

inline constexpr Cycle kNever = ~Cycle{0};

}  // namespace simfa
