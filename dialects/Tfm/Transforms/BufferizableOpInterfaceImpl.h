//===- BufferizableOpInterfaceImpl.h - Bufferizing tfm ops ------*- C++ -*-===//
#ifndef TFM_DIALECTS_TFM_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define TFM_DIALECTS_TFM_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
namespace tfm {
/// Lets one-shot bufferization handle `tfm.attention` (destination-style: it
/// writes into its `init` buffer).
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace tfm
} // namespace mlir

#endif // TFM_DIALECTS_TFM_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
