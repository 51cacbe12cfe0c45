#include "analytical/errors.h"

#include <charconv>

#include "simfa/error.h"

namespace simfa::analytical {

void throw_errors(std::string_view where, const std::vector<std::string>& messages) {
  // InputError prefixes the first line with "where: error: "; later lines carry their own.
  std::string text = messages.front();
  for (std::size_t i = 1; i < messages.size(); ++i) {
    text.push_back('\n');
    text.append(where).append(": error: ").append(messages[i]);
  }
  throw InputError(SourceLocation{std::string(where), 0, 0}, text);
}

std::string format_number(double value) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

}  // namespace simfa::analytical
