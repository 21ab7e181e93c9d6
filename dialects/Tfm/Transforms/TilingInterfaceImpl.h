//===- TilingInterfaceImpl.h - Tiling tfm ops -------------------*- C++ -*-===//
#ifndef TFM_DIALECTS_TFM_TRANSFORMS_TILINGINTERFACEIMPL_H
#define TFM_DIALECTS_TFM_TRANSFORMS_TILINGINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
namespace tfm {
/// Lets MLIR's tiling (`scf::tileUsingSCF`, tile-and-fuse) tile
/// `tfm.attention` on tensors over its result's dims: batch and head dims,
/// query rows and value columns.
void registerTilingInterfaceExternalModels(DialectRegistry &registry);
} // namespace tfm
} // namespace mlir

#endif // TFM_DIALECTS_TFM_TRANSFORMS_TILINGINTERFACEIMPL_H
