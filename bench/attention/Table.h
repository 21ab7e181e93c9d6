//===- Table.h - A markdown table printed row by row -----------*- C++ -*-===//
#ifndef TFM_BENCH_ATTENTION_TABLE_H
#define TFM_BENCH_ATTENTION_TABLE_H

#include <cstdio>
#include <string>
#include <vector>

namespace bench {

/// A GitHub-markdown table with fixed column widths, so that rows can be
/// printed as their measurements finish and still line up.
class Table {
public:
  struct Column {
    std::string header;
    int width;
    bool rightAligned = true;
  };

  explicit Table(std::vector<Column> columns);
  void printHeader(std::FILE *out) const;
  /// Cells wider than their column widen that line only.
  void printRow(std::FILE *out, const std::vector<std::string> &cells) const;

private:
  std::vector<Column> columns;
};

/// printf into a std::string.
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

} // namespace bench

#endif // TFM_BENCH_ATTENTION_TABLE_H
