//===- ReferenceMath.cpp - float64 elementwise, reductions, shapes --------===//
#include "ReferenceMath.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ref {
namespace {
void check(bool ok, const char *what) {
  if (!ok)
    throw std::logic_error(std::string("reference: ") + what);
}

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}
} // namespace

Array scalar(double v) { return Array({}, {v}); }

Array broadcastMap(
    const std::vector<const Array *> &operands,
    const std::function<double(const std::vector<double> &)> &f) {
  size_t rank = 0;
  for (const Array *a : operands)
    rank = std::max(rank, a->shape.size());
  std::vector<int64_t> shape(rank, 1);
  for (const Array *a : operands)
    for (size_t i = 0; i < a->shape.size(); ++i) {
      int64_t &d = shape[rank - a->shape.size() + i];
      int64_t s = a->shape[i];
      check(s == 1 || d == 1 || s == d, "shapes do not broadcast");
      if (s != 1)
        d = s;
    }
  Array out(shape);
  std::vector<int64_t> index(rank, 0);
  std::vector<double> args(operands.size());
  for (int64_t flat = 0; flat < out.numel(); ++flat) {
    int64_t rest = flat;
    for (size_t i = rank; i-- > 0;) {
      index[i] = rest % shape[i];
      rest /= shape[i];
    }
    for (size_t k = 0; k < operands.size(); ++k) {
      const Array &a = *operands[k];
      std::vector<int64_t> strides = stridesOf(a.shape);
      int64_t offset = 0;
      for (size_t i = 0; i < a.shape.size(); ++i) {
        int64_t at = index[rank - a.shape.size() + i];
        offset += (a.shape[i] == 1 ? 0 : at) * strides[i];
      }
      args[k] = a.data[size_t(offset)];
    }
    out.data[size_t(flat)] = f(args);
  }
  return out;
}

Array map(const Array &x, const std::function<double(double)> &f) {
  Array y = x;
  for (double &v : y.data)
    v = f(v);
  return y;
}

Array map2(const Array &a, const Array &b,
           const std::function<double(double, double)> &f) {
  return broadcastMap(
      {&a, &b}, [&](const std::vector<double> &v) { return f(v[0], v[1]); });
}

Array reduce(const Array &x, Reduction kind, std::vector<int64_t> dims,
             bool keepdim) {
  int64_t rank = x.rank();
  if (dims.empty())
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(i);
  std::vector<bool> reduced(size_t(rank), false);
  for (int64_t d : dims)
    reduced[size_t(d < 0 ? d + rank : d)] = true;
  std::vector<int64_t> kept(x.shape);
  for (int64_t i = 0; i < rank; ++i)
    if (reduced[size_t(i)])
      kept[size_t(i)] = 1;
  double inf = std::numeric_limits<double>::infinity();
  double start = kind == Reduction::max   ? -inf
                 : kind == Reduction::min ? inf
                                          : 0.0;
  Array acc(kept, std::vector<double>(size_t(Array(kept).numel()), start));
  std::vector<int64_t> xs = stridesOf(x.shape), ks = stridesOf(kept);
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i)
    if (reduced[size_t(i)])
      count *= x.shape[size_t(i)];
  for (int64_t flat = 0; flat < x.numel(); ++flat) {
    int64_t offset = 0;
    for (int64_t i = 0; i < rank; ++i) {
      int64_t at = flat / xs[size_t(i)] % x.shape[size_t(i)];
      offset += (reduced[size_t(i)] ? 0 : at) * ks[size_t(i)];
    }
    double &a = acc.data[size_t(offset)];
    double v = x.data[size_t(flat)];
    if (kind == Reduction::max)
      a = std::isnan(a) || std::isnan(v) ? NAN : std::max(a, v);
    else if (kind == Reduction::min)
      a = std::isnan(a) || std::isnan(v) ? NAN : std::min(a, v);
    else
      a += v;
  }
  if (kind == Reduction::mean)
    for (double &a : acc.data)
      a /= double(count);
  if (keepdim)
    return acc;
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i)
    if (!reduced[size_t(i)])
      shape.push_back(x.shape[size_t(i)]);
  return Array(shape, acc.data);
}

Array reshape(const Array &x, std::vector<int64_t> shape) {
  Array y(std::move(shape), x.data);
  check(y.numel() == x.numel(), "reshape changes the element count");
  return y;
}

Array slice(const Array &x, int64_t dim, int64_t begin, int64_t end) {
  check(0 <= begin && begin <= end && end <= x.shape[size_t(dim)],
        "slice bounds");
  std::vector<int64_t> shape = x.shape;
  shape[size_t(dim)] = end - begin;
  Array y(shape);
  std::vector<int64_t> xs = stridesOf(x.shape), ys = stridesOf(shape);
  for (int64_t flat = 0; flat < y.numel(); ++flat) {
    int64_t offset = 0;
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t at = flat / ys[i] % shape[i];
      offset += (int64_t(i) == dim ? at + begin : at) * xs[i];
    }
    y.data[size_t(flat)] = x.data[size_t(offset)];
  }
  return y;
}

Array select(const Array &x, int64_t dim, int64_t index) {
  Array y = slice(x, dim, index, index + 1);
  y.shape.erase(y.shape.begin() + dim);
  return y;
}

Array permute(const Array &x, const std::vector<int64_t> &permutation) {
  std::vector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(x.shape[size_t(p)]);
  Array y(shape);
  std::vector<int64_t> xs = stridesOf(x.shape), ys = stridesOf(shape);
  for (int64_t flat = 0; flat < y.numel(); ++flat) {
    int64_t offset = 0;
    for (size_t i = 0; i < shape.size(); ++i)
      offset += flat / ys[i] % shape[i] * xs[size_t(permutation[i])];
    y.data[size_t(flat)] = x.data[size_t(offset)];
  }
  return y;
}

} // namespace ref
