// A plain shared library: loads fine but exports no simfa_plugin_descriptor.
extern "C" __attribute__((visibility("default"))) int simfa_test_answer() {
  return 42;
}
