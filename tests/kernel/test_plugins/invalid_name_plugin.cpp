// A component named without its kind: "kind.impl" is required, so the library is refused.
#include "simfa/plugin.h"

namespace {

class Idle final : public simfa::Component {
 public:
  static void describe(simfa::Schema&) {}
  explicit Idle(const simfa::BuildContext&) {}
};

}  // namespace

SIMFA_PLUGIN("simfa-test-invalid-name",
             simfa::component_info<Idle>("probe.fine", "1.0.0", "Valid, but its library is not."),
             simfa::component_info<Idle>("Unified", "1.0.0", "No kind, and not lowercase."))
