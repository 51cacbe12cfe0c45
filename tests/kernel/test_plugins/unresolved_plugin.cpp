// A plugin that calls a function no library defines: it links (see CMakeLists.txt) but must
// fail at load under eager binding, with the loader naming the symbol.
#include "simfa/plugin.h"

extern "C" int simfa_test_symbol_nobody_defines(int);

namespace {

class Broken final : public simfa::Component {
 public:
  static void describe(simfa::Schema& s) {
    s.integer("value").def(simfa_test_symbol_nobody_defines(1)).doc("Never read.");
  }
  explicit Broken(const simfa::BuildContext&) {}
};

}  // namespace

SIMFA_PLUGIN("simfa-test-unresolved",
             simfa::component_info<Broken>("probe.broken", "1.0.0", "Cannot load."))
