// Reading a frontend's input file (a trace, an event log, a TTGIR, a Proton trace) whole.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace simfa {

/// Reads the regular file `path` whole into `text`, in one read: the byte-at-a-time
/// istreambuf_iterator copy it replaces took longer than tokenizing a 20 KB TTGIR in the fuzz
/// build (docs/reliability.md). Anything but a regular file is refused, as a device or a pipe
/// would be read forever. Returns "" when it read the file, else why not, for the caller's
/// message ("cannot read trace 'PATH': no such file").
inline std::string read_regular_file(const std::string& path, std::string& text) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return std::filesystem::exists(path, ec) ? "not a regular file" : "no such file";
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "cannot open it";
  const std::streamoff size = in.tellg();
  if (size < 0) return "cannot tell its size";
  text.resize(static_cast<std::size_t>(size));
  in.seekg(0);
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (in.gcount() != static_cast<std::streamsize>(size)) return "read failed";
  return "";
}

}  // namespace simfa
