//===- Table.cpp - A markdown table printed row by row -------------------===//
#include "Table.h"

#include <algorithm>
#include <cstdarg>

namespace bench {

Table::Table(std::vector<Column> columns) : columns(std::move(columns)) {
  for (Column &c : this->columns)
    c.width = std::max<int>(c.width, int(c.header.size()));
}

void Table::printHeader(std::FILE *out) const {
  std::vector<std::string> headers;
  for (const Column &c : columns)
    headers.push_back(c.header);
  printRow(out, headers);
  std::fputc('|', out);
  for (const Column &c : columns) {
    std::string rule(size_t(c.width + 2), '-');
    if (c.rightAligned)
      rule.back() = ':';
    std::fputs(rule.c_str(), out);
    std::fputc('|', out);
  }
  std::fputc('\n', out);
  std::fflush(out);
}

void Table::printRow(std::FILE *out,
                     const std::vector<std::string> &cells) const {
  std::fputc('|', out);
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string &cell = i < cells.size() ? cells[i] : std::string();
    if (columns[i].rightAligned)
      std::fprintf(out, " %*s |", columns[i].width, cell.c_str());
    else
      std::fprintf(out, " %-*s |", columns[i].width, cell.c_str());
  }
  std::fputc('\n', out);
  std::fflush(out);
}

std::string format(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  char buffer[512];
  std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  return buffer;
}

} // namespace bench
