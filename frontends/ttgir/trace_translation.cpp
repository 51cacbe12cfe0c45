#include "trace_translation.h"

#include <algorithm>

#include "simfa/isa.h"
#include "simfa/warpgroup_streams.h"

namespace simfa::ttgir {

namespace {

std::string at(Pos p) { return std::to_string(p.line) + ":" + std::to_string(p.column); }

}  // namespace

TraceTranslation::TraceTranslation(const KernelProgram& kernel, const ProtonTrace& trace,
                                   std::uint64_t cta_count, bool fill_lost)
    : kernel_(kernel), trace_(trace), fill_lost_(fill_lost) {
  auto fail = [&](Pos p, const std::string& message) -> void {
    throw InputError(trace_.at(p), message);
  };
  if (trace_.events.empty()) throw InputError(trace_.at(Pos{1, 1}), "the trace has no events");
  if (trace_.kernel != kernel_.kernel_name)
    fail(trace_.events.front().pos, "the trace is of kernel '" + trace_.kernel +
                                        "', the TTGIR of '" + kernel_.kernel_name + "'");

  // Every scope name once: which site it records, checked against the TTGIR.
  std::vector<std::uint32_t> site_of(trace_.names.size(), kNone);
  for (const ProtonEvent& e : trace_.events) {
    if (site_of[e.name] != kNone) continue;
    const std::string& name = trace_.names[e.name];
    const auto scope = parse_scope_name(name);
    if (!scope)
      fail(e.pos, "scope '" + name + "' is neither a SIMFA scope (simfa ttgir instrument) nor a "
                                     "site of tools/device/triton_trace.py");
    if (scope->site >= kernel_.sites.size())
      fail(e.pos, "scope '" + name + "' names site " + std::to_string(scope->site) +
                      " but the TTGIR has " + std::to_string(kernel_.sites.size()) + " sites");
    const Site& site = kernel_.sites[scope->site];
    const Pos op = site.op->pos;
    if (scope->kind != site.kind)
      fail(e.pos, "scope '" + name + "' is a " + site_kind_name(scope->kind) + " but site " +
                      std::to_string(site.id) + " of the TTGIR (" + at(op) + ") is a " +
                      site_kind_name(site.kind) + ": the trace was not made from this TTGIR");
    if (scope->simfa && name != site.scope)
      fail(e.pos, "scope '" + name + "' does not match site " + std::to_string(site.id) +
                      " of the TTGIR (" + at(op) + "), '" + site.scope +
                      "': the trace was not made from this TTGIR");
    site_of[e.name] = scope->site;
  }

  // Every CTA of the grid needs events (checked CTA by CTA below). A grid of more CTAs than the
  // trace has events cannot have them, and would size the tables below (a pid of "CTA4000000000"
  // threw std::bad_alloc; found by fuzz_proton_trace): name the first CTA without events now.
  if (cta_count > trace_.events.size()) {
    std::vector<std::uint32_t> ctas;
    for (const ProtonEvent& e : trace_.events) ctas.push_back(e.cta);
    std::sort(ctas.begin(), ctas.end());
    std::uint64_t missing = 0;
    for (std::uint32_t c : ctas)
      if (c == missing) ++missing;
      else if (c > missing) break;
    throw InputError(trace_.at(Pos{1, 1}), "CTA " + std::to_string(missing) + " of the grid of " +
                                               std::to_string(cta_count) +
                                               " has no events in the trace");
  }

  std::uint32_t warps = 0;
  for (const Partition& p : kernel_.partitions)
    warps = std::max(warps, p.start_warp + p.num_warps);
  std::vector<std::vector<std::uint32_t>> by_warp(cta_count * warps);
  for (std::uint32_t i = 0; i < trace_.events.size(); ++i) {
    const ProtonEvent& e = trace_.events[i];
    if (e.cta >= cta_count)
      fail(e.pos, "CTA " + std::to_string(e.cta) + " is outside the grid of " +
                      std::to_string(cta_count) + " CTAs");
    if (kernel_.partition_of_warp(e.warp) == kNone)
      fail(e.pos, "warp " + std::to_string(e.warp) + " is none of the kernel's " +
                      std::to_string(warps) + " warps");
    by_warp[e.cta * warps + e.warp].push_back(i);
  }

  auto same_site = [](const Scope& a, const Scope& b) { return a.site == b.site; };
  sequences_.resize(cta_count);
  for (std::uint64_t cta = 0; cta < cta_count; ++cta) {
    auto& wgs = sequences_[cta];
    wgs.resize(kernel_.warpgroup_count());
    WarpGroupStreams<Scope> streams(kernel_.warpgroup_count(), warps);
    bool any = false;
    for (std::uint32_t w = 0; w < warps; ++w) {
      auto& list = by_warp[cta * warps + w];
      if (list.empty()) continue;
      any = true;
      std::stable_sort(list.begin(), list.end(), [&](std::uint32_t a, std::uint32_t b) {
        return trace_.events[a].ts < trace_.events[b].ts;
      });
      const std::uint32_t p = kernel_.partition_of_warp(w);
      const Partition& part = kernel_.partitions[p];
      const std::uint32_t local = w - (p == 0 ? 0 : part.start_warp);
      const std::uint32_t wg = part.first_warpgroup + local / kWarpsPerWarpGroup;
      Sequence& seq = wgs[wg];
      // The WarpGroup's first recorded warp is the reference; the other warps must have recorded
      // the same scopes, no more and no fewer.
      if (seq.warps == 0) seq.warp = w;
      const std::size_t reference_size = streams.stream(wg).size();
      std::size_t k = 0;  // where this warp parts from the reference, if it does
      for (; k < list.size(); ++k) {
        const ProtonEvent& e = trace_.events[list[k]];
        const auto merge = streams.add(wg, w, {site_of[e.name], e.pos}, same_site);
        if (seq.warps > 0 && merge != WarpGroupStreams<Scope>::Merge::kMatched) break;
      }
      if (seq.warps > 0 && (k < list.size() || list.size() != reference_size)) {
        const std::vector<Scope>& reference = streams.stream(wg);
        const std::string head = "CTA " + std::to_string(cta) + " warp " + std::to_string(w);
        const std::string ref = " warp " + std::to_string(seq.warp) + " of its WarpGroup";
        if (list.size() != reference_size)
          fail(trace_.events[list[std::min(k, list.size() - 1)]].pos,
               head + " has " + std::to_string(list.size()) + " events where" + ref + " has " +
                   std::to_string(reference_size) + ": a warp with missing events (they " +
                   "part at scope #" + std::to_string(k) + ")");
        fail(trace_.events[list[k]].pos,
             head + ": scope #" + std::to_string(k) + " is '" +
                 trace_.names[trace_.events[list[k]].name] + "' where" + ref + " has site " +
                 std::to_string(reference[k].site) + " (" + at(reference[k].where) + ")");
      }
      ++seq.warps;
    }
    std::vector<std::vector<Scope>> scopes = streams.take();
    for (std::uint32_t wg = 0; wg < wgs.size(); ++wg) wgs[wg].scopes = std::move(scopes[wg]);
    if (!any)
      throw InputError(trace_.at(Pos{1, 1}), "CTA " + std::to_string(cta) + " of the grid of " +
                                                 std::to_string(cta_count) +
                                                 " has no events in the trace");
    for (const Sequence& s : wgs)
      if (s.warps == 0) ++unrecorded_;
  }
}

void TraceTranslation::apply(std::uint64_t cta, CtaProgram& program,
                             const std::vector<std::vector<SiteRecord>>& records) const {
  std::vector<Instruction> code;
  std::vector<std::uint32_t> next_of_site(kernel_.sites.size());
  std::vector<std::vector<std::uint32_t>> by_site(kernel_.sites.size());
  for (std::uint32_t w = 0; w < program.warpgroups.size(); ++w) {
    const Sequence& seq = sequences_[cta][w];
    if (seq.warps == 0) continue;
    auto where = [&]() {
      return "CTA " + std::to_string(cta) + " warp " + std::to_string(seq.warp) + " (WarpGroup " +
             std::to_string(w) + ")";
    };
    const std::vector<SiteRecord>& rec = records[w];
    const std::size_t expected = rec.size() - 1;
    if (fill_lost_ && seq.scopes.size() == kProtonScopesPerWarp && expected > seq.scopes.size()) {
      // Proton kept the last 128 scopes: they must be the last ones the TTGIR executes, and the
      // static program, which has them in that order, stands for the whole WarpGroup.
      const std::size_t lost = expected - seq.scopes.size();
      for (std::size_t k = 0; k < seq.scopes.size(); ++k)
        if (rec[lost + k].site != seq.scopes[k].site)
          throw InputError(trace_.at(seq.scopes[k].where),
                           where() + ": scope #" + std::to_string(k) +
                               " of the filled buffer is site " +
                               std::to_string(seq.scopes[k].site) + " where the TTGIR's " +
                               std::to_string(lost + k) + "th site is " +
                               std::to_string(rec[lost + k].site) +
                               ": the lost events cannot be filled in");
      filled_ += lost;
      continue;
    }
    for (auto& v : by_site) v.clear();
    std::fill(next_of_site.begin(), next_of_site.end(), 0);
    for (std::uint32_t r = 0; r + 1 < rec.size(); ++r) by_site[rec[r].site].push_back(r);
    const auto& src = program.warpgroups[w].code;
    code.clear();
    for (std::size_t k = 0; k < seq.scopes.size(); ++k) {
      const std::uint32_t site = seq.scopes[k].site;
      if (next_of_site[site] >= by_site[site].size())
        throw InputError(trace_.at(seq.scopes[k].where),
                         where() + " records execution " + std::to_string(next_of_site[site] + 1) +
                             " of site " + std::to_string(site) + " (" +
                             at(kernel_.sites[site].op->pos) + " of the TTGIR), which runs " +
                             std::to_string(by_site[site].size()) +
                             " times with these launch arguments: the trace was made with "
                             "other arguments");
      const SiteRecord& r = rec[by_site[site][next_of_site[site]++]];
      code.insert(code.end(), src.begin() + r.begin, src.begin() + r.end);
    }
    if (seq.scopes.size() < expected) {
      const bool full = seq.scopes.size() >= kProtonScopesPerWarp;
      throw InputError(
          trace_.at(seq.scopes.front().where),
          where() + " records " + std::to_string(seq.scopes.size()) +
              " scopes where the TTGIR "
              "executes " +
              std::to_string(expected) + " sites with these launch arguments: " +
              (full ? "Proton keeps 256 records (128 scopes) a warp, so the trace lost the first "
                      "events of a long loop; trace warp 0 only (sampling_strategy=\"selective\") "
                      "or a shorter K, or give the traced launch's arguments"
                    : "the trace is truncated or was made with other launch arguments"));
    }
    const SiteRecord& tail = rec.back();
    code.insert(code.end(), src.begin() + tail.begin, src.begin() + tail.end);
    program.warpgroups[w].code.swap(code);
  }
}

}  // namespace simfa::ttgir
