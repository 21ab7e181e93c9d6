//===- ReferenceMath.h - float64 elementwise, reductions, shapes -*- C++
//-*-===//
//
// The reference for the language's tensor arithmetic: NumPy broadcasting of
// any number of operands, reductions and reshapes, in plain loops over
// float64 (booleans and integers are held as exact doubles).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TESTS_E2E_REFERENCEMATH_H
#define TFM_TESTS_E2E_REFERENCEMATH_H

#include "Reference.h"

#include <functional>

namespace ref {

/// f applied elementwise to the operands broadcast NumPy-style.
Array broadcastMap(const std::vector<const Array *> &operands,
                   const std::function<double(const std::vector<double> &)> &f);
Array map(const Array &x, const std::function<double(double)> &f);
Array map2(const Array &a, const Array &b,
           const std::function<double(double, double)> &f);
/// A number as a rank-0 array.
Array scalar(double v);

enum class Reduction { sum, mean, max, min };
/// torch.sum/mean/amax/amin over `dims` (negative count from the end).
Array reduce(const Array &x, Reduction kind, std::vector<int64_t> dims,
             bool keepdim);
/// The same data with another shape.
Array reshape(const Array &x, std::vector<int64_t> shape);
/// Elements [begin, end) of `dim` (already resolved, no clamping).
Array slice(const Array &x, int64_t dim, int64_t begin, int64_t end);
/// Element `index` of `dim`, which is dropped.
Array select(const Array &x, int64_t dim, int64_t index);
/// torch.permute.
Array permute(const Array &x, const std::vector<int64_t> &permutation);

} // namespace ref

#endif // TFM_TESTS_E2E_REFERENCEMATH_H
