// The fa3 components: `workload.fa3` (generator and translator in one step), `workload.fa3_events`
// (a recorded or generated event log, translated) and `gen.fa3` (writes the event log). The two
// workloads share Fa3EventTranslator, so a generated log and the direct path give the same
// programs.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "fa3_event_log.h"
#include "fa3_events.h"
#include "fa3_kernel.h"
#include "fa3_translator.h"
#include "simfa/component.h"
#include "simfa/generator.h"
#include "simfa/program.h"

namespace simfa::fa3 {

class Fa3Source final : public ProgramSource {
 public:
  explicit Fa3Source(const BuildContext& context);
  Fa3Source(const Fa3Source&) = delete;  // the translator refers to kernel_
  Fa3Source& operator=(const Fa3Source&) = delete;
  static void describe(Schema& schema);

  const std::vector<TensorMap>& tensor_maps() const override { return kernel_.maps(); }
  std::uint64_t cta_count() const override { return kernel_.cta_count(); }
  void build(std::uint64_t index, CtaProgram& out) override;
  std::vector<std::pair<std::string, std::string>> parameters() const override;

 private:
  Fa3Kernel kernel_;
  Fa3EventTranslator translator_;
  CtaEvents events_;
  std::vector<std::uint64_t> tiles_;  ///< the CTA's work tiles (persistent schedulers)
};

class Fa3EventsSource final : public ProgramSource {
 public:
  explicit Fa3EventsSource(const BuildContext& context);
  Fa3EventsSource(const Fa3EventsSource&) = delete;  // the translator refers to kernel_
  Fa3EventsSource& operator=(const Fa3EventsSource&) = delete;
  static void describe(Schema& schema);

  const std::vector<TensorMap>& tensor_maps() const override { return kernel_.maps(); }
  std::uint64_t cta_count() const override { return kernel_.cta_count(); }
  void build(std::uint64_t index, CtaProgram& out) override;
  std::vector<std::pair<std::string, std::string>> parameters() const override;

 private:
  Fa3Kernel kernel_;
  Fa3EventLog log_;
  Fa3EventTranslator translator_;
};

class Fa3Generator final : public WorkloadGenerator {
 public:
  explicit Fa3Generator(const BuildContext& context);
  static void describe(Schema& schema);
  void write(std::ostream& out) override;

 private:
  Fa3Kernel kernel_;
};

}  // namespace simfa::fa3
