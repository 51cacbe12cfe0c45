// The memory-port interface between the SM-side engines and the memory system.
#pragma once

#include <cstdint>

#include "simfa/component.h"
#include "simfa/types.h"

namespace simfa {

class MemClient;

/// One line-sized request. `token` is the client's; the memory system returns it untouched.
struct MemRequest {
  Addr addr = 0;
  std::uint32_t bytes = 0;
  std::uint16_t sm = 0;
  bool write = false;
  std::uint64_t token = 0;
  MemClient* client = nullptr;
};

class SIMFA_API MemClient {
 public:
  virtual void on_response(Cycle now, const MemRequest& request) = 0;

 protected:
  ~MemClient() = default;
};

/// Kind "memory": where TMA engines send line requests. A port always accepts; back-pressure is
/// modeled as queueing inside it, never by dropping. Responses arrive no earlier than the cycle
/// after `send`.
class SIMFA_API MemoryPort : public Component {
 public:
  virtual void send(Cycle now, const MemRequest& request) = 0;
};

}  // namespace simfa
