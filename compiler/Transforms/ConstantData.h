//===- ConstantData.h - The bytes of a dense constant -----------*- C++ -*-===//
//
// Weights are `DenseElementsAttr`s when small and `DenseResourceElementsAttr`
// blobs when large (over the mapped .safetensors file, not copied into the
// context; tfm-bind-weights). The passes that read or move weight bytes take
// both through this.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_TRANSFORMS_CONSTANTDATA_H
#define TFM_COMPILER_TRANSFORMS_CONSTANTDATA_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <optional>

namespace mlir::tfm {

/// The row-major bytes of every element of `attr`, for a non-splat dense
/// elements attribute or a resource blob that holds data; else nullopt.
inline std::optional<ArrayRef<char>> getRawConstantData(Attribute attr) {
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(attr)) {
    if (dense.isSplat())
      return std::nullopt;
    return dense.getRawData();
  }
  if (auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(attr)) {
    DenseResourceElementsHandle handle = resource.getRawHandle();
    if (AsmResourceBlob *blob = handle.getBlob())
      return blob->getData();
  }
  return std::nullopt;
}

} // namespace mlir::tfm

#endif // TFM_COMPILER_TRANSFORMS_CONSTANTDATA_H
