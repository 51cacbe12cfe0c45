// The memory-port interface between the SM-side engines and the memory system.
#pragma once

#include <cstdint>
#include <optional>

#include "simfa/component.h"
#include "simfa/types.h"

namespace simfa {

class MemClient;

/// A last-level cache's lookups so far, as its memory system reports them (MemoryPort::cache_use).
struct CacheUse {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
};

/// Bytes of requests so far, read and written.
struct ByteTotals {
  std::uint64_t read = 0;
  std::uint64_t write = 0;
};

/// The byte totals of the stats contract (docs/stats.md) so far, as a memory system reports them
/// (MemoryPort::traffic).
struct MemoryTraffic {
  ByteTotals llc;   ///< requests arriving at the last-level cache: memory.llc_read/write_bytes
  ByteTotals dram;  ///< requests DRAM served: memory.dram_read_bytes, memory.dram_write_bytes
};

/// One line-sized request. `token` is the client's; the memory system returns it untouched.
struct MemRequest {
  Addr addr = 0;
  std::uint32_t bytes = 0;
  std::uint16_t sm = 0;
  bool write = false;
  /// Set on a read's response when the line was fetched from DRAM for this very request (the L2
  /// miss that filled it); false for hits and for requests merged into another's fill. The
  /// loaded-DRAM law of tma.traffic reads it.
  bool from_dram = false;
  std::uint64_t token = 0;
  MemClient* client = nullptr;
};
// Every level queues requests by value: the flag fills write's padding.
static_assert(sizeof(MemRequest) == 32);

class SIMFA_API MemClient {
 public:
  virtual void on_response(Cycle now, const MemRequest& request) = 0;
  /// A step the client asked its port to run (MemoryPort::defer_step), at the cycle and in the
  /// place of the event it stands for. The default ignores it.
  virtual void on_step(Cycle /*now*/) {}
  /// A hint, not an event: `request`'s response comes soon (a memory system that knows the order
  /// of its next responses calls it a few responses ahead). A client may start fetching the host
  /// memory its on_response will read; it must change no state a result depends on. The default
  /// ignores it.
  virtual void prefetch_response(const MemRequest& /*request*/) {}

 protected:
  ~MemClient() = default;
};

/// Kind "memory": where TMA engines send line requests. A port always accepts; back-pressure is
/// modeled as queueing inside it, never by dropping. Responses arrive no earlier than the cycle
/// after `send`. Every memory plugin reports the byte totals of the stats contract (traffic()).
class SIMFA_API MemoryPort : public Component {
 public:
  virtual void send(Cycle now, const MemRequest& request) = 0;

  /// Whether the port takes bursts (send_burst). A port that does not is sent line by line.
  virtual bool accepts_bursts() const { return false; }
  /// Lines of one engine booked ahead (docs/performance.md §10): line i, `request` with the
  /// address `addrs[i]`, is handled as if sent at its own cycle, which is `first` for the first
  /// `first_slots` lines and then one cycle on for every `per_cycle` lines. `first` >= now;
  /// the port copies what it keeps. Only called when accepts_bursts().
  struct Burst {
    MemRequest request;           ///< every line's request but its address
    const Addr* addrs = nullptr;  ///< `count` line addresses in send order
    std::uint32_t count = 0;
    Cycle first = 0;
    std::uint32_t first_slots = 1;  ///< 1..per_cycle
    std::uint32_t per_cycle = 1;

    /// The cycle of line `k`.
    Cycle cycle_of(std::uint64_t k) const {
      return k < first_slots ? first : first + (k - first_slots) / per_cycle + 1;
    }
    /// Its lines that have left by the end of cycle `at`.
    std::uint32_t sent_by(Cycle at) const {
      if (at < first) return 0;
      const std::uint64_t sent = first_slots + (at - first) * std::uint64_t{per_cycle};
      return sent < count ? static_cast<std::uint32_t>(sent) : count;
    }
    /// Whether a line sent at `at` as the `used`-th of its cycle (0-based) takes the slot after
    /// this burst's last line.
    bool followed_by(Cycle at, std::uint32_t used) const {
      const std::uint64_t k = std::uint64_t{count} - 1;  // its last line
      const Cycle last = cycle_of(k);
      const std::uint64_t in_last =
          k < first_slots ? per_cycle - first_slots + k + 1 : (k - first_slots) % per_cycle + 1;
      return in_last < per_cycle ? at == last && used == in_last : at == last + 1 && used == 0;
    }
  };
  virtual void send_burst(Cycle /*now*/, const Burst& /*burst*/) {}

  /// The latency of a port that answers every request exactly that many cycles after it was
  /// sent, whatever else is in flight (memory.ideal); none where the traffic decides. A client
  /// of such a port may time its requests itself and only have them counted (send_counted).
  virtual std::optional<Cycle> fixed_latency() const { return std::nullopt; }
  /// Lines a client of a fixed-latency port times itself: counted in the port's statistics and
  /// byte totals at the cycles `burst` gives them (`addrs` may be null), never answered; the
  /// client completes them itself, fixed_latency() after each line's cycle. Only called when
  /// fixed_latency() has a value (docs/performance.md §20).
  virtual void send_counted(Cycle /*now*/, const Burst& /*burst*/) {}

  /// Whether the port runs its clients' steps (defer_step).
  virtual bool runs_steps() const { return false; }
  /// Runs `client.on_step(when)` where an event the client scheduled now for (when,
  /// Priority::kEngine) would fire: the same cycle and the same place in the order of all
  /// events, so that nothing a result depends on changes. `when` >= the queue's now(). The
  /// steps that many clients defer one after another cost the port one event, not one each
  /// (simfa/step_batch.h, docs/performance.md §16). Only called when runs_steps().
  virtual void defer_step(Cycle /*when*/, MemClient& /*client*/) {}

  /// The hits and misses of the last-level cache this port is or holds, so far; none where it
  /// has no cache. The timeline's "L2 hit rate" track reads it while a run goes, so it changes
  /// nothing.
  virtual std::optional<CacheUse> cache_use() const { return std::nullopt; }

  /// Kind "memory": the byte totals of the stats contract so far (docs/stats.md). Every memory
  /// plugin answers it, and the kernel refuses one that answers none; the parts of a hierarchy
  /// (coalescer, L2, DRAM) need not. The kernel writes them into the stats file
  /// (memory.llc_read_bytes, ...) and reads them for the summary, simfa ablate and the bandwidth
  /// tracks, which read them while a run goes, so it changes nothing.
  virtual std::optional<MemoryTraffic> traffic() const { return std::nullopt; }

  /// A census the SMs' TMA engines keep in the port they share: each says when it starts to have
  /// loads in flight (+1) and when it has none left (-1). The loaded-DRAM law of tma.traffic
  /// divides the DRAM among sms_loading(). A port without the census answers 0, which leaves the
  /// law off.
  virtual void count_loading_sm(int /*delta*/) {}
  virtual std::uint32_t sms_loading() const { return 0; }
};

}  // namespace simfa

namespace simfa {

// ---- the memory hierarchy (DESIGN.md §5): coalescer -> L2 (slice map) -> DRAM -------------------
// A manifest either names one `[memory]` port (e.g. memory.ideal) or the hierarchy's slots
// `[coalescer]`, `[l2]` (with its `[l2.slice_map]` and optional `[l2.replacement]` sub-slots) and
// `[dram]`; the kernel builds the chain and connects each level to the next. Responses travel back
// through MemRequest::client: a level that forwards a request substitutes itself as the client and
// keeps the original.

/// Kind "coalescer": the SM-facing port of the hierarchy; merges identical line requests.
class SIMFA_API Coalescer : public MemoryPort {
 public:
  virtual void connect(MemoryPort& l2) = 0;
};

/// Kind "slice": maps a line to an L2 slice.
class SIMFA_API SliceMap : public Component {
 public:
  /// `line` is the line index (address / line bytes); returns a slice in [0, slices).
  virtual std::uint32_t slice_of(std::uint64_t line, std::uint32_t slices) const = 0;
};

/// Kind "replacement": which way of a full L2 set a new line evicts, and how hits and fills age
/// the ways (`[memory.l2.replacement]`; the default, `replacement.lru`, is least recently used).
/// The cache owns the state: per set, one byte per way and one 64-bit word, all zero at the
/// start, which the policy reads and writes as it likes. Empty ways are filled first, without
/// asking the policy; a way emptied (an invalidated shadow copy) keeps its byte until the next
/// fill. One call per hit and per fill: no per-cycle work.
class SIMFA_API ReplacementPolicy : public Component {
 public:
  struct Set {
    std::uint8_t* ways;   ///< ways[0..assoc): the per-way state
    std::uint64_t* word;  ///< the set's own word
    std::uint32_t assoc;  ///< ways in the set (1..64)
  };
  /// A request hit `way`.
  virtual void on_hit(Set set, std::uint32_t way) = 0;
  /// A line was installed in `way` (a fill, a full-line write or a shadow copy).
  virtual void on_fill(Set set, std::uint32_t way) = 0;
  /// The way a new line evicts; every way of `set` is valid. May update the state (e.g. age it).
  virtual std::uint32_t victim(Set set) = 0;
};

/// Kind "l2": the last-level cache.
class SIMFA_API L2Cache : public MemoryPort {
 public:
  virtual void connect(const SliceMap& slice_map, MemoryPort& dram) = 0;
  /// Bytes of the requests arriving at it so far: the hierarchy's MemoryTraffic::llc.
  virtual ByteTotals llc_bytes() const = 0;
};

/// Kind "dram": main memory.
class SIMFA_API DramBackend : public MemoryPort {
 public:
  /// Bytes of the requests it served so far: the hierarchy's MemoryTraffic::dram.
  virtual ByteTotals dram_bytes() const = 0;
};

}  // namespace simfa
