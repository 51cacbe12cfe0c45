// A library from a future sdk: its descriptor shares only the leading abi_version with ours
// and continues with members this simfa does not know, so reading past it would be wrong.
#include <cstdint>

#include "simfa/plugin.h"

namespace {

struct FutureDescriptor {
  std::uint32_t abi_version;
  const char* (*future_member)(int);
};

const FutureDescriptor kDescriptor{simfa::kSdkAbiVersion + SIMFA_TEST_ABI_OFFSET, nullptr};

const simfa::PluginDescriptor* entry() {
  return reinterpret_cast<const simfa::PluginDescriptor*>(&kDescriptor);
}

}  // namespace

BOOST_DLL_ALIAS(entry, simfa_plugin_descriptor)
