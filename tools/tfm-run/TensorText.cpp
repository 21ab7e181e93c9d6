//===- TensorText.cpp - Tensors as tfm-run prints and compares them -------===//
//
// Part of tfm-run (tfm-run.cpp).
//
//===----------------------------------------------------------------------===//

#include "TensorText.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace tfm::run;

namespace {

// numpy's print options: summarise above 1000 elements, showing 3 at each
// edge, and wrap lines at 75 columns.
constexpr int64_t kSummaryThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 75;

/// Prints a tensor the way numpy does with precision=4, floatmode='fixed'
/// (bools as True and False).
class TensorPrinter {
public:
  explicit TensorPrinter(const tfm_tensor &tensor) : tensor(tensor) {}

  std::string print() {
    int64_t count = tfm_tensor_element_count(&tensor);
    if (count == 0)
      return "[]";
    bool summarise = count > kSummaryThreshold;
    // The indices shown along each dim; -1 stands for "...".
    shown.resize(tensor.rank);
    strides.assign(tensor.rank, 1);
    for (int32_t d = tensor.rank - 1; d >= 0; --d) {
      int64_t size = tensor.shape[d];
      if (d + 1 < tensor.rank)
        strides[d] = strides[d + 1] * tensor.shape[d + 1];
      for (int64_t i = 0; i < size; ++i) {
        if (summarise && size > 2 * kEdgeItems && i == kEdgeItems) {
          shown[d].push_back(-1);
          i = size - kEdgeItems;
        }
        shown[d].push_back(i);
      }
    }
    chooseFormat(0, 0);
    return block(0, 0, "");
  }

private:
  std::string element(int64_t index) const {
    double value = valueAt(tensor, index);
    switch (tensor.dtype) {
    case TFM_DTYPE_I32:
    case TFM_DTYPE_I64:
    case TFM_DTYPE_I8:
    case TFM_DTYPE_U8:
      return fmt::format("{}", static_cast<int64_t>(value));
    case TFM_DTYPE_BOOL:
      // numpy pads True to the width of False inside arrays, not alone.
      return value != 0 ? (tensor.rank ? " True" : "True") : "False";
    default:
      return scientific ? fmt::format("{:.4e}", value)
                        : fmt::format("{:.4f}", value);
    }
  }

  /// Like numpy, switches to scientific notation when fixed would hide
  /// digits or the magnitudes differ by more than 1000x, and pads every
  /// element to the width of the widest shown one.
  void chooseFormat(int32_t dim, int64_t offset) {
    if (dim == tensor.rank) {
      double magnitude = std::fabs(valueAt(tensor, offset));
      if (std::isfinite(magnitude) && magnitude != 0) {
        minMagnitude = std::min(minMagnitude, magnitude);
        maxMagnitude = std::max(maxMagnitude, magnitude);
      }
      return;
    }
    for (int64_t i : shown[dim])
      if (i >= 0)
        chooseFormat(dim + 1, offset + i * strides[dim]);
    if (dim != 0)
      return;
    scientific =
        maxMagnitude > 0 && (maxMagnitude >= 1e8 || minMagnitude < 1e-4 ||
                             maxMagnitude / minMagnitude > 1e3);
    measure(0, 0);
  }

  void measure(int32_t dim, int64_t offset) {
    if (dim == tensor.rank) {
      width = std::max(width, element(offset).size());
      return;
    }
    for (int64_t i : shown[dim])
      if (i >= 0)
        measure(dim + 1, offset + i * strides[dim]);
  }

  std::string block(int32_t dim, int64_t offset, const std::string &indent) {
    if (dim == tensor.rank)
      return fmt::format("{:>{}}", element(offset), width);
    std::string out = "[";
    std::string childIndent = indent + " ";
    bool innermost = dim + 1 == tensor.rank;
    // The line starts with one bracket or space per enclosing dim.
    size_t column = indent.size() + 1;
    for (size_t k = 0; k < shown[dim].size(); ++k) {
      int64_t i = shown[dim][k];
      std::string child =
          i < 0 ? "..."
                : block(dim + 1, offset + i * strides[dim], childIndent);
      if (k > 0 && innermost) {
        // Wrap long rows, leaving room for the closing brackets.
        if (column + 1 + child.size() + dim + 1 > kLineWidth) {
          out += "\n" + childIndent;
          column = childIndent.size();
        } else {
          out += " ";
          ++column;
        }
      } else if (k > 0) {
        out += std::string(tensor.rank - dim - 1, '\n') + childIndent;
      }
      out += child;
      column += child.size();
    }
    return out + "]";
  }

  const tfm_tensor &tensor;
  std::vector<std::vector<int64_t>> shown;
  std::vector<int64_t> strides;
  double minMagnitude = INFINITY, maxMagnitude = 0;
  bool scientific = false;
  size_t width = 0;
};

} // namespace

std::string tfm::run::formatTensor(const tfm_tensor &tensor) {
  return TensorPrinter(tensor).print();
}

std::string tfm::run::describe(const tfm_tensor &tensor) {
  std::string dims;
  for (int32_t d = 0; d < tensor.rank; ++d)
    dims += fmt::format("{}{}", d ? ", " : "", tensor.shape[d]);
  return fmt::format("{}[{}]", tfm_dtype_name(tensor.dtype), dims);
}

double tfm::run::valueAt(const tfm_tensor &tensor, int64_t index) {
  switch (tensor.dtype) {
  case TFM_DTYPE_F32:
    return static_cast<const float *>(tensor.data)[index];
  case TFM_DTYPE_F64:
    return static_cast<const double *>(tensor.data)[index];
  case TFM_DTYPE_I32:
    return static_cast<const int32_t *>(tensor.data)[index];
  case TFM_DTYPE_I64:
    return static_cast<double>(
        static_cast<const int64_t *>(tensor.data)[index]);
  case TFM_DTYPE_BOOL:
    return static_cast<const unsigned char *>(tensor.data)[index] ? 1 : 0;
  case TFM_DTYPE_F16:
    return tfm_f16_to_f32(static_cast<const uint16_t *>(tensor.data)[index]);
  case TFM_DTYPE_BF16:
    return tfm_bf16_to_f32(static_cast<const uint16_t *>(tensor.data)[index]);
  case TFM_DTYPE_I8:
    return static_cast<const int8_t *>(tensor.data)[index];
  case TFM_DTYPE_U8:
    return static_cast<const uint8_t *>(tensor.data)[index];
  case TFM_DTYPE_INVALID:
    break;
  }
  return 0;
}

const char *tfm::run::npyDescr(tfm_dtype dtype) {
  switch (dtype) {
  case TFM_DTYPE_F32:
    return "'<f4'";
  case TFM_DTYPE_F64:
    return "'<f8'";
  case TFM_DTYPE_I32:
    return "'<i4'";
  case TFM_DTYPE_I64:
    return "'<i8'";
  case TFM_DTYPE_BOOL:
    return "'|b1'";
  case TFM_DTYPE_F16:
    return "'<f2'";
  case TFM_DTYPE_BF16:
    return "'<u2', read as the bits of bf16";
  case TFM_DTYPE_I8:
    return "'|i1'";
  case TFM_DTYPE_U8:
    return "'|u1'";
  case TFM_DTYPE_INVALID:
    break;
  }
  return "?";
}

std::string tfm::run::describeInput(const tfm_model *model, size_t index) {
  std::string dims;
  for (int32_t d = 0; d < tfm_model_input_rank(model, index); ++d) {
    const char *symbol = nullptr;
    int64_t size = tfm_model_input_dim(model, index, d, &symbol);
    dims += fmt::format("{}{}", d ? ", " : "",
                        symbol ? std::string(symbol) : std::to_string(size));
  }
  return fmt::format("{}[{}]",
                     tfm_dtype_name(tfm_model_input_dtype(model, index)), dims);
}

bool tfm::run::compare(const std::string &name, const tfm_tensor &actual,
                       const tfm_tensor &expected, double rtol, double atol,
                       bool atolScaled) {
  bool sameShape = actual.rank == expected.rank;
  for (int32_t d = 0; sameShape && d < actual.rank; ++d)
    sameShape = actual.shape[d] == expected.shape[d];
  if (!sameShape) {
    fmt::print("{}: shape {} but expected {}: MISMATCH\n", name,
               describe(actual), describe(expected));
    return false;
  }
  double maxAbs = 0, maxRel = 0;
  bool close = true;
  int64_t count = tfm_tensor_element_count(&actual);
  if (atolScaled) {
    double largest = 1;
    for (int64_t i = 0; i < count; ++i)
      largest = std::max(largest, std::fabs(valueAt(expected, i)));
    atol *= largest;
  }
  for (int64_t i = 0; i < count; ++i) {
    double a = valueAt(actual, i), e = valueAt(expected, i);
    if (a == e)
      continue;
    double diff = std::fabs(a - e);
    if (std::isnan(diff))
      diff = INFINITY;
    close = close && diff <= atol + rtol * std::fabs(e);
    maxAbs = std::max(maxAbs, diff);
    maxRel = std::max(maxRel, e == 0 ? INFINITY : diff / std::fabs(e));
  }
  fmt::print("{}: max abs err {:.1e}, max rel err {:.1e} (rtol {:g}, atol "
             "{:g}): {}\n",
             name, maxAbs, maxRel, rtol, atol, close ? "ok" : "MISMATCH");
  return close;
}
