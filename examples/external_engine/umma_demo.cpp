// umma.demo: a Blackwell-style MMA whose accumulator lives in tensor memory, with its own commit
// and wait, added to simfa by a plugin: three instructions in the instruction table and the
// engine that runs them, of the new kind "umma", which a manifest names in [sm.umma].
//
// DEMONSTRATION ONLY. The timing is made up (a pipeline of `n_per_cycle` columns a cycle and a
// fixed completion latency); it is not a validated model of Blackwell's tcgen05.mma.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <simfa/core.h>
#include <simfa/event_queue.h>
#include <simfa/instruction_set.h>
#include <simfa/plugin.h>

namespace {

std::string umma_n_rule(std::int64_t n) {
  return n % 16 == 0 ? "" : "UMMA N is " + std::to_string(n) + "; it must be a multiple of 16";
}

// UMMA N, column, gid: one MMA of N columns into tensor memory from `column`, in group `gid`.
constexpr simfa::OperandSpec kUmmaOperands[] = {
    {.name = "N", .field = simfa::Field::kXLow, .what = "UMMA N", .min = 16, .max = 256,
     .rule = umma_n_rule},
    {.name = "column", .field = simfa::Field::kY, .what = "the tensor-memory column", .max = 511},
    {.name = "gid", .field = simfa::Field::kZ, .what = "the UMMA gid", .label = "gid"}};
// UMMA_WAIT N: wait until at most N committed UMMA groups of the WarpGroup are unfinished.
constexpr simfa::OperandSpec kUmmaWaitOperands[] = {
    {.name = "N", .what = "the UMMA_WAIT group count", .max = 64}};

constexpr simfa::InstructionSpec kInstructions[] = {
    {.name = "UMMA", .engine = "umma", .operands = kUmmaOperands, .span = "umma",
     .wait_span = "wait:umma_full", .flight = "umma_flight"},
    {.name = "UMMA_COMMIT", .engine = "umma"},
    {.name = "UMMA_WAIT", .engine = "umma", .operands = kUmmaWaitOperands,
     .wait_span = "wait:umma"}};

// One per SM: a pipeline taking UMMAs in issue order, at most `depth` of them queued.
class UmmaDemo final : public simfa::InstructionEngine, private simfa::EventTarget {
 public:
  static void describe(simfa::Schema& s) {
    s.integer("n_per_cycle")
        .unit("columns/SM cycle")
        .def(4)
        .range(1, 256)
        .doc("made-up rate: an UMMA of N columns holds the pipeline N / n_per_cycle cycles");
    s.integer("latency")
        .unit("SM cycles")
        .def(64)
        .range(0, 100000)
        .doc("made-up latency from leaving the pipeline to the result in tensor memory");
    s.integer("depth")
        .unit("UMMAs")
        .def(4)
        .range(1, 64)
        .doc("UMMAs the pipeline queues; a full one refuses the next");
    s.stat("ummas", simfa::StatKind::kCounter, "instructions", "UMMAs executed");
    s.stat("busy_cycles", simfa::StatKind::kCounter, "cycles", "cycles the pipeline is busy");
  }

  explicit UmmaDemo(const simfa::BuildContext& c)
      : events_(c.events),
        n_per_cycle_(static_cast<std::uint32_t>(c.params.integer("n_per_cycle"))),
        latency_(static_cast<simfa::Cycle>(c.params.integer("latency"))),
        depth_(static_cast<std::size_t>(c.params.integer("depth"))),
        umma_(c.instructions->opcode(*c.instructions->find("UMMA"))),
        commit_(c.instructions->opcode(*c.instructions->find("UMMA_COMMIT"))),
        ummas_(c.stats.counter("ummas")),
        busy_cycles_(c.stats.counter("busy_cycles")) {}

  void connect(simfa::EngineClient& client) override { client_ = &client; }
  // The run summary shows "umma busy" from this (through the SM), not from the statistic's name.
  std::optional<std::uint64_t> busy_cycles() const override { return busy_cycles_.value(); }

  bool ready(simfa::Cycle now, const simfa::EngineOp& op) override {
    const simfa::Instruction& in = *op.instruction;
    if (in.op == umma_) {
      std::erase_if(queued_, [&](simfa::Cycle leaves) { return leaves <= now; });
      return queued_.size() < depth_;
    }
    if (in.op == commit_) return true;
    Group& g = group(op);  // UMMA_WAIT N
    std::erase_if(g.committed, [&](simfa::Cycle done) { return done <= now; });
    return g.committed.size() <= in.x;
  }

  simfa::Cycle issue(simfa::Cycle now, const simfa::EngineOp& op) override {
    const simfa::Instruction& in = *op.instruction;
    Group& g = group(op);
    if (in.op == umma_) {
      const simfa::Cycle start = std::max(now, pipe_free_);
      const simfa::Cycle hold = std::max<simfa::Cycle>(1, (in.x & 0xffffu) / n_per_cycle_);
      pipe_free_ = start + hold;
      busy_cycles_.add(hold);
      ummas_.add();
      queued_.push_back(pipe_free_);
      g.open_done = std::max(g.open_done, pipe_free_ + latency_);
      // On the timeline: from its issue until its result is in tensor memory.
      client_->on_engine_flight(op, now, pipe_free_ + latency_);
      // The pipeline has room again when this one leaves it.
      events_.schedule(pipe_free_, *this, 0, simfa::Priority::kMemory);
    } else if (in.op == commit_) {
      const simfa::Cycle done = std::max(now, g.open_done);
      g.committed.push_back(done);
      g.open_done = 0;
      events_.schedule(done, *this, 0, simfa::Priority::kMemory);  // its waiters go on
    }
    return now + 1;
  }

 private:
  // A WarpGroup's groups: when its committed ones finish, and its open one.
  struct Group {
    std::uint64_t age = ~std::uint64_t{0};
    std::vector<simfa::Cycle> committed;
    simfa::Cycle open_done = 0;
  };

  Group& group(const simfa::EngineOp& op) {
    if (op.warpgroup >= groups_.size()) groups_.resize(op.warpgroup + 1);
    Group& g = groups_[op.warpgroup];
    if (g.age != op.age) g = Group{op.age, {}, 0};  // another WarpGroup took the slot
    return g;
  }

  void on_event(simfa::Cycle now, std::uint64_t) override { client_->on_engine_wake(now); }

  simfa::EventQueue& events_;
  const std::uint32_t n_per_cycle_;
  const simfa::Cycle latency_;
  const std::size_t depth_;
  const simfa::Opcode umma_;
  const simfa::Opcode commit_;
  simfa::EngineClient* client_ = nullptr;
  simfa::Cycle pipe_free_ = 0;
  std::vector<simfa::Cycle> queued_;  // when each queued UMMA leaves the pipeline
  std::vector<Group> groups_;         // by WarpGroup slot
  simfa::Counter& ummas_;
  simfa::Counter& busy_cycles_;
};

}  // namespace

SIMFA_PLUGIN_WITH_INSTRUCTIONS(
    "simfa-umma-demo", kInstructions,
    simfa::component_info<UmmaDemo>(
        "umma.demo", "0.1.0",
        "DEMO, made-up timing: a Blackwell-style tensor-memory MMA engine (UMMA, UMMA_COMMIT, "
        "UMMA_WAIT)"))
