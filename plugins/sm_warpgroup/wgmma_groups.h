// One WarpGroup's WGMMA commit groups (wgmma.commit_group / wgmma.wait_group in PTX): at most
// one open group, collecting the WGMMAs issued since the last close, and the closed groups that
// still have WGMMAs in the tensor core. WGMMA_WAIT n waits on unfinished_closed() <= n.
//
// Groups are numbered by a 32-bit sequence that wraps; a WGMMA's completion token carries its
// group's number. Live groups sit in a power-of-two ring indexed by that number; the ring only
// grows when more groups are live at once than ever before, so issuing allocates nothing.
#pragma once

#include <cstdint>
#include <vector>

namespace simfa::sm_warpgroup {

class WgmmaGroups {
 public:
  WgmmaGroups() : outstanding_(8, 0) {}

  /// Forget every group (a new WarpGroup takes the slot); keeps the ring's storage.
  void reset() {
    head_ = next_ = 0;
    open_ = false;
    unfinished_closed_ = 0;
  }

  /// Counts one issued WGMMA of group `gid` and returns its group's number. A WGMMA whose gid
  /// differs from the open group's closes that group first; with no open group it opens one.
  std::uint32_t join(std::uint32_t gid) {
    if (open_ && open_gid_ != gid) close();
    if (!open_) {
      if (next_ - head_ == outstanding_.size()) grow();
      open_seq_ = next_++;
      outstanding_[index(open_seq_)] = 0;
      open_ = true;
      open_gid_ = gid;
    }
    ++outstanding_[index(open_seq_)];
    return open_seq_;
  }

  /// Closes the open group, if any (WGMMA_COMMIT, and the start of WGMMA_WAIT).
  void close() {
    if (!open_) return;
    open_ = false;
    if (outstanding_[index(open_seq_)] > 0) ++unfinished_closed_;
    retire_finished();
  }

  /// One WGMMA of group `seq` completed. False when `seq` names no live group with WGMMAs in
  /// flight (a completion for a WarpGroup that has since left the slot).
  bool complete(std::uint32_t seq) {
    if (seq - head_ >= next_ - head_) return false;
    std::uint32_t& n = outstanding_[index(seq)];
    if (n == 0) return false;
    if (--n == 0 && !(open_ && seq == open_seq_)) {
      --unfinished_closed_;
      retire_finished();
    }
    return true;
  }

  /// Closed groups with at least one WGMMA not yet complete.
  std::uint32_t unfinished_closed() const { return unfinished_closed_; }

 private:
  std::size_t index(std::uint32_t seq) const { return seq & (outstanding_.size() - 1); }

  // Drops finished closed groups from the front; a finished group behind an unfinished one
  // stays until the front passes it (it counts nowhere meanwhile).
  void retire_finished() {
    while (head_ != next_ && !(open_ && head_ == open_seq_) && outstanding_[index(head_)] == 0)
      ++head_;
  }

  void grow() {
    std::vector<std::uint32_t> bigger(outstanding_.size() * 2, 0);
    for (std::uint32_t s = head_; s != next_; ++s)
      bigger[s & (bigger.size() - 1)] = outstanding_[index(s)];
    outstanding_.swap(bigger);
  }

  std::vector<std::uint32_t> outstanding_;  ///< WGMMAs in flight per live group
  std::uint32_t head_ = 0;                  ///< oldest live group
  std::uint32_t next_ = 0;                  ///< number of the next group opened
  bool open_ = false;
  std::uint32_t open_seq_ = 0;
  std::uint32_t open_gid_ = 0;
  std::uint32_t unfinished_closed_ = 0;
};

}  // namespace simfa::sm_warpgroup
