#include "fa3_sources.h"

#include "fa3_config.h"
#include "simfa/error.h"
#include "simfa/input_file.h"

namespace simfa::fa3 {

namespace {

void check_index(std::uint64_t index, std::uint64_t count) {
  if (index >= count)
    throw Error("internal: CTA " + std::to_string(index) + " requested from a grid of " +
                std::to_string(count));
}

std::string read_log(const Params& params) {
  const std::string& path = params.string("path");
  std::string text;
  if (const std::string why = read_regular_file(path, text); !why.empty())
    params.fail("path", "cannot read event log '" + path + "': " + why);
  return text;
}

}  // namespace

// ---- workload.fa3 ------------------------------------------------------------------------------

void Fa3Source::describe(Schema& schema) {
  describe_fa3_keys(schema);
}

Fa3Source::Fa3Source(const BuildContext& context)
    : kernel_(read_fa3_kernel(context.params, context.gpu)),
      translator_(kernel_, "workload.fa3 (generated events)") {
  // Every CTA holds what CTA 0 holds (the same WarpGroups, registers and shared memory), which
  // begin() sets up without generating the CTA's tiles (a long sequence has millions).
  CtaProgram first;
  translator_.begin(0, first);
  translator_.set_first_wave(first_wave_ctas(first, context.gpu, cta_count()));
  translator_.finish();
}

void Fa3Source::build(std::uint64_t index, CtaProgram& out) {
  check_index(index, cta_count());
  if (!kernel_.persistent()) {
    generate_events(kernel_, index, events_);
    translator_.translate(index, events_, out);
    return;
  }
  kernel_.tiles_of_cta(index, tiles_);
  translator_.begin(index, out);
  for (std::size_t i = 0; i < tiles_.size(); ++i) {
    generate_events(kernel_, tiles_[i], events_);
    translator_.append(tiles_[i], events_, i + 1 == tiles_.size());
  }
  translator_.finish();
}

std::vector<std::pair<std::string, std::string>> Fa3Source::parameters() const {
  return fa3_parameters(kernel_);
}

// ---- workload.fa3_events -----------------------------------------------------------------------

namespace {

/// An event log holds one work tile a CTA: the persistent schedulers have no log form.
Fa3Kernel one_tile_per_cta(const Params& params, Fa3Kernel kernel) {
  if (kernel.persistent())
    params.fail("scheduler",
                "an FA3 event log holds one work tile per CTA: give scheduler = none (kernel = "
                "cudnn makes the grid persistent)");
  return kernel;
}

}  // namespace

void Fa3EventsSource::describe(Schema& schema) {
  schema.string("path").required().doc(
      "the event log (CSV, docs/workloads.md), from gen.fa3 or an instrumented FA3 kernel");
  describe_fa3_keys(schema);
}

Fa3EventsSource::Fa3EventsSource(const BuildContext& context)
    : kernel_(one_tile_per_cta(context.params, read_fa3_kernel(context.params, context.gpu))),
      log_(read_log(context.params), context.params.string("path"), kernel_),
      translator_(kernel_, context.params.string("path")) {
  // Translating every CTA once reports a malformed log before the run starts. Every CTA holds
  // what CTA 0 holds, which gives the first wave.
  CtaProgram scratch;
  for (std::uint64_t cta = 0; cta < cta_count(); ++cta) {
    translator_.translate(cta, log_.cta(cta), scratch);
    if (cta == 0) translator_.set_first_wave(first_wave_ctas(scratch, context.gpu, cta_count()));
  }
}

void Fa3EventsSource::build(std::uint64_t index, CtaProgram& out) {
  check_index(index, cta_count());
  translator_.translate(index, log_.cta(index), out);
}

std::vector<std::pair<std::string, std::string>> Fa3EventsSource::parameters() const {
  std::vector<std::pair<std::string, std::string>> p = fa3_parameters(kernel_);
  p.insert(p.begin(), {"path", log_.file()});
  p.emplace_back("events", std::to_string(log_.records()));
  return p;
}

// ---- gen.fa3 -----------------------------------------------------------------------------------

void Fa3Generator::describe(Schema& schema) {
  describe_fa3_keys(schema);
}

Fa3Generator::Fa3Generator(const BuildContext& context)
    : kernel_(one_tile_per_cta(context.params, read_fa3_kernel(context.params, context.gpu))) {}

void Fa3Generator::write(std::ostream& out) {
  write_event_log(kernel_,
                  "simfa FlashAttention-3 event log (docs/workloads.md); read it with "
                  "--workload fa3_events:path=FILE," +
                      fa3_spec(kernel_),
                  out);
}

}  // namespace simfa::fa3
