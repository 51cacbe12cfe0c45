#include "proton_trace.h"

#include <charconv>
#include <cstdlib>
#include <limits>
#include <unordered_map>

#include "simfa/input_file.h"

#if SIMFA_TTGIR_HAVE_ZLIB
#include <zlib.h>
#endif

namespace simfa::ttgir {

namespace {

/// A JSON reader that keeps line:col, reads the event fields it needs and skips the rest.
class JsonReader {
 public:
  JsonReader(std::string_view text, const std::string& file, ProtonTrace& out)
      : s_(text), file_(file), out_(out) {}

  void run() {
    ws();
    if (peek() == '[') {
      events();
    } else if (peek() == '{') {
      ++i_;
      bool found = false;
      members([&](const std::string& key) {
        if (key == "traceEvents") {
          events();
          found = true;
        } else {
          skip();
        }
      });
      if (!found) fail(Pos{1, 1}, "no \"traceEvents\" array: not a chrome trace");
    } else {
      fail(pos(), "expected '{' or '[': not a chrome trace");
    }
    ws();
    if (i_ < s_.size()) fail(pos(), "text after the trace's JSON value");
  }

 private:
  Pos pos() const { return {line_, static_cast<std::uint32_t>(i_ - line_begin_ + 1)}; }
  [[noreturn]] void fail(Pos p, const std::string& message) const {
    throw InputError(SourceLocation{file_, p.line, p.column}, message);
  }
  [[noreturn]] void truncated() const {
    fail(pos(), "truncated JSON: the file ends inside " +
                    (in_events_ ? std::string("the traceEvents array (an incomplete trace)")
                                : std::string("a value")));
  }
  char peek() {
    if (i_ >= s_.size()) truncated();
    return s_[i_];
  }
  void ws() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\n') {
        ++line_;
        line_begin_ = ++i_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else {
        return;
      }
    }
  }
  void expect(char c) {
    ws();
    if (peek() != c) fail(pos(), std::string("expected '") + c + "'");
    ++i_;
  }

  template <typename F>
  void members(F&& on_key) {  // after '{'
    ws();
    if (peek() == '}') {
      ++i_;
      return;
    }
    for (;;) {
      ws();
      if (peek() != '"') fail(pos(), "expected a key string");
      const std::string key = string();
      expect(':');
      ws();
      on_key(key);
      ws();
      const char c = peek();
      ++i_;
      if (c == '}') return;
      if (c != ',') fail(Pos{line_, static_cast<std::uint32_t>(i_ - line_begin_)},
                         "expected ',' or '}'");
    }
  }

  std::string string() {  // at '"'
    const Pos start = pos();
    ++i_;
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) truncated();
      const char c = s_[i_++];
      if (c == '"') return out;
      if (c == '\n') fail(start, "unterminated string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) truncated();
      const char e = s_[i_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u':
          if (i_ + 4 > s_.size()) truncated();
          out += '?';  // scope names are ASCII; other code points are not needed
          i_ += 4;
          break;
        default: out += e;
      }
    }
  }

  double number() {
    const std::size_t from = i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' ||
                              s_[i_] == '+' || s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E'))
      ++i_;
    if (i_ >= s_.size()) truncated();
    const std::string text(s_.substr(from, i_ - from));
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size())
      fail(Pos{line_, static_cast<std::uint32_t>(from - line_begin_ + 1)}, "bad number");
    return v;
  }

  // A skipped value's arrays and objects recurse, so their depth is bounded: a trace nesting
  // 10^5 '[' overflowed the stack (docs/reliability.md); Proton's events nest 3 levels.
  static constexpr int kMaxDepth = 64;

  void skip() {
    ws();
    const char c = peek();
    if ((c == '{' || c == '[') && depth_ == kMaxDepth)
      fail(pos(), "JSON nested more than " + std::to_string(kMaxDepth) + " deep");
    if (c == '{') {
      ++i_;
      ++depth_;
      members([&](const std::string&) { skip(); });
      --depth_;
    } else if (c == '[') {
      ++i_;
      ws();
      if (peek() == ']') {
        ++i_;
        return;
      }
      ++depth_;
      for (;;) {
        skip();
        ws();
        const char d = peek();
        ++i_;
        if (d == ']') break;
        if (d != ',') fail(pos(), "expected ',' or ']'");
      }
      --depth_;
    } else if (c == '"') {
      string();
    } else if (c == 't' || c == 'f' || c == 'n') {
      for (const char* word : {"true", "false", "null"})
        if (s_.substr(i_, std::char_traits<char>::length(word)) == word) {
          i_ += std::char_traits<char>::length(word);
          return;
        }
      if (s_.size() - i_ < 5) truncated();
      fail(pos(), "unexpected word");
    } else {
      number();
    }
  }

  void events() {
    ws();
    if (peek() != '[') fail(pos(), "\"traceEvents\" is not an array");
    ++i_;
    in_events_ = true;
    ws();
    if (peek() == ']') {
      ++i_;
      in_events_ = false;
      return;
    }
    for (;;) {
      ws();
      event();
      ws();
      const char c = peek();
      ++i_;
      if (c == ']') break;
      if (c != ',') fail(Pos{line_, static_cast<std::uint32_t>(i_ - line_begin_)},
                         "expected ',' or ']' between events");
    }
    in_events_ = false;
  }

  void event() {
    const Pos at = pos();
    if (peek() != '{') fail(at, "expected an event object");
    ++i_;
    std::string name, ph, pid, tid;
    double ts = 0;
    bool has_ts = false;
    members([&](const std::string& key) {
      ws();
      if ((key == "name" || key == "ph" || key == "pid" || key == "tid") && peek() == '"') {
        std::string v = string();
        (key == "name" ? name : key == "ph" ? ph : key == "pid" ? pid : tid) = std::move(v);
      } else if (key == "ts" && peek() != '"' && peek() != '{' && peek() != '[') {
        ts = number();
        has_ts = true;
      } else {
        skip();
      }
    });
    if (ph != "X") return;  // metadata and instant events carry no scope
    if (name.empty() || pid.empty() || tid.empty() || !has_ts)
      fail(at, "a complete event (ph \"X\") needs name, pid, tid and ts");
    ProtonEvent e;
    e.pos = at;
    e.ts = ts;
    // pid: "<kernel> Core<SM> CTA<id>"
    const std::size_t core = pid.rfind(" Core");
    const std::size_t cta = pid.rfind(" CTA");
    if (core == std::string::npos || cta == std::string::npos || cta < core ||
        !read_u32(std::string_view(pid).substr(cta + 4), e.cta))
      fail(at, "pid '" + pid + "' is not Proton's \"<kernel> Core<SM> CTA<id>\"");
    // cta_count is one past the largest id, a 32-bit count (it wrapped to 0 for this id).
    if (e.cta == std::numeric_limits<std::uint32_t>::max())
      fail(at, "pid '" + pid + "': CTA ids go up to " + std::to_string(e.cta - 1));
    const std::string kernel = pid.substr(0, core);
    if (out_.kernel.empty()) out_.kernel = kernel;
    if (kernel != out_.kernel)
      fail(at, "the trace holds two kernels, '" + out_.kernel + "' and '" + kernel + "'");
    // tid: "warp <w> (line <n>)"
    std::string_view t(tid);
    if (!t.starts_with("warp ")) fail(at, "tid '" + tid + "' is not Proton's \"warp <w> ...\"");
    t.remove_prefix(5);
    if (!read_u32(t.substr(0, t.find(' ')), e.warp))
      fail(at, "tid '" + tid + "' is not Proton's \"warp <w> ...\"");
    auto [it, fresh] = name_ids_.emplace(name, static_cast<std::uint32_t>(out_.names.size()));
    if (fresh) out_.names.push_back(name);
    e.name = it->second;
    out_.cta_count = std::max(out_.cta_count, e.cta + 1);
    out_.events.push_back(e);
  }

  static bool read_u32(std::string_view text, std::uint32_t& v) {
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    return !text.empty() && r.ec == std::errc() && r.ptr == text.data() + text.size();
  }

  std::string_view s_;
  const std::string& file_;
  ProtonTrace& out_;
  std::unordered_map<std::string, std::uint32_t> name_ids_;
  std::size_t i_ = 0;
  std::size_t line_begin_ = 0;
  std::uint32_t line_ = 1;
  bool in_events_ = false;
  int depth_ = 0;  ///< arrays and objects open around the value skip() reads
};

bool gzipped(const std::string& data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

std::string gunzip(const std::string& data, const std::string& path, const SourceLocation& where) {
#if SIMFA_TTGIR_HAVE_ZLIB
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw InputError(where, "zlib failed to start");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buffer[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // input ended early
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END)
    throw InputError(where, "'" + path + "' is a damaged or truncated gzip file" +
                                (rc == Z_BUF_ERROR ? " (it ends early)" : ""));
  return out;
#else
  (void)data;
  throw InputError(where, "'" + path + "' is gzip-compressed and this simfa was built without "
                          "zlib: gunzip it first");
#endif
}

}  // namespace

ProtonTrace parse_proton_trace(std::string_view text, const std::string& file) {
  ProtonTrace t;
  t.file = file;
  JsonReader(text, file, t).run();
  return t;
}

ProtonTrace read_proton_trace(const std::string& path, const SourceLocation& where) {
  std::string data;
  if (const std::string why = read_regular_file(path, data); !why.empty())
    throw InputError(where, "cannot read trace '" + path + "': " + why);
  if (gzipped(data)) data = gunzip(data, path, where);
  return parse_proton_trace(data, path);
}

}  // namespace simfa::ttgir
