// Provides probe.counter, which the good test plugin provides too, and a name of its own that
// must not load either: the host takes a library whole or not at all.
#include "simfa/plugin.h"

namespace {

class Idle final : public simfa::Component {
 public:
  static void describe(simfa::Schema&) {}
  explicit Idle(const simfa::BuildContext&) {}
};

}  // namespace

SIMFA_PLUGIN("simfa-test-dup",
             simfa::component_info<Idle>("probe.only_in_dup", "1.0.0", "Never loaded."),
             simfa::component_info<Idle>("probe.counter", "9.9.9", "A second probe.counter."))
