//===- Bench.cpp - Shapes, FLOP counts and implementation names ----------===//
#include "Bench.h"

#include <cstdio>

namespace bench {

std::string Shape::str() const {
  return std::to_string(b) + "," + std::to_string(h) + "," + std::to_string(s) +
         "," + std::to_string(d);
}

std::optional<Shape> parseShape(const std::string &text) {
  long long b, h, s, d;
  char tail;
  if (std::sscanf(text.c_str(), "%lld,%lld,%lld,%lld%c", &b, &h, &s, &d,
                  &tail) != 4)
    return std::nullopt;
  if (b < 1 || h < 1 || s < 1 || d < 1)
    return std::nullopt;
  return Shape{b, h, s, d};
}

double attentionFlops(const Shape &shape, bool causal) {
  double flops = 4.0 * double(shape.b) * double(shape.h) * double(shape.s) *
                 double(shape.s) * double(shape.d);
  return causal ? flops / 2 : flops;
}

const char *implName(Impl impl) {
  switch (impl) {
  case Impl::Noop:
    return "noop";
  case Impl::Fused:
    return "fused";
  case Impl::Unfused:
    return "unfused";
  case Impl::OneDnn:
    return "onednn";
  }
  return "?";
}

std::optional<Impl> parseImpl(const std::string &name) {
  for (Impl impl : {Impl::Noop, Impl::Fused, Impl::Unfused, Impl::OneDnn})
    if (name == implName(impl))
      return impl;
  return std::nullopt;
}

} // namespace bench
