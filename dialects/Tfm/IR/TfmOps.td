//===- TfmOps.td - Operations of the tfm dialect -----------*- tablegen -*-===//
//
// The ops of the tfm dialect, one file per family: tfm.weight here, the
// primitives attention is spelled with by hand (TfmPrimitiveOps.td),
// elementwise math, reductions and run-time checks (TfmMathOps.td), the
// layers a model author writes (TfmLayerOps.td), and the ops fusion and
// packing form for the code generators (TfmKernelOps.td). Ops on tensors are
// pure functions of them.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_OPS_TD
#define TFM_OPS_TD

include "dialects/Tfm/IR/TfmBase.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Tfm_WeightOp : Tfm_Op<"weight", [Pure]> {
  let summary = "A named model parameter";
  let description = [{
    Refers to a tensor of the weights file by its PyTorch `state_dict` name.
    `tfm-bind-weights` replaces it with a constant holding the data, after
    checking that the file's dtype and shape match the result type.

    Example:

    ```mlir
    %w = tfm.weight "W_q.weight" : tensor<2x2xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

include "dialects/Tfm/IR/TfmPrimitiveOps.td"
include "dialects/Tfm/IR/TfmMathOps.td"
include "dialects/Tfm/IR/TfmLayerOps.td"
include "dialects/Tfm/IR/TfmKernelOps.td"

#endif // TFM_OPS_TD
