//===- TensorText.h - Tensors as tfm-run prints and compares them -*- C++
//-*-===//
//
// numpy's way of printing an array, the .npy spelling of each dtype, and
// numpy.allclose's comparison with --expected.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOOLS_TFM_RUN_TENSORTEXT_H
#define TFM_TOOLS_TFM_RUN_TENSORTEXT_H

#include "tfm/runtime.h"

#include <cstdint>
#include <string>

namespace tfm::run {

/// "f32[2, 3]": a tensor's type and shape.
std::string describe(const tfm_tensor &tensor);

/// "f32[seq, 2]": input `index` as the model declares it.
std::string describeInput(const tfm_model *model, size_t index);

/// Element `index` of a dense tensor of any dtype, as a double.
double valueAt(const tfm_tensor &tensor, int64_t index);

/// How numpy spells a dtype in a .npy file, as tfm_npy_read maps them.
const char *npyDescr(tfm_dtype dtype);

/// The tensor as numpy prints it with precision=4, floatmode='fixed'
/// (bools as True and False; summarised past 1000 elements).
std::string formatTensor(const tfm_tensor &tensor);

/// Compares with numpy.allclose's rule, prints the largest errors under
/// `name`, and returns true when every element is close. NaN is never
/// close, equal infinities are. With `atolScaled`, atol is multiplied by
/// max(1, the largest |expected|).
bool compare(const std::string &name, const tfm_tensor &actual,
             const tfm_tensor &expected, double rtol, double atol,
             bool atolScaled);

} // namespace tfm::run

#endif // TFM_TOOLS_TFM_RUN_TENSORTEXT_H
