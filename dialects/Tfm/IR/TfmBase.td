//===- TfmBase.td - The tfm dialect definition -------------*- tablegen -*-===//
//
// The tfm dialect holds transformer layers at the level a model author writes
// them. Everything here is on tensors; lowering goes to linalg.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_BASE_TD
#define TFM_BASE_TD

include "mlir/IR/OpBase.td"

def Tfm_Dialect : Dialect {
  let name = "tfm";
  let summary = "Transformer layers: embeddings, linear layers and attention";
  let description = [{
    The `tfm` dialect is the front door of the tfm compiler. The `.tfm` parser
    and the C++ `ModelBuilder` emit it; `tfm-lower-layers` lowers the
    attention layers (`sdpa`, `multi_head_attention`) to `tfm.attention`, and
    `convert-tfm-to-linalg` lowers the primitives to linalg and tensor ops.

    Shapes follow PyTorch: a linear weight is `[out, in]` and computes
    `y = x W^T + b`; batch dimensions lead, features are innermost.

    Element types are a parameter of every op: floats `f32`, `f64`, `bf16`
    and `f16`, integers `i8`, `i32` and `i64`, and `i1`. The operands and
    result of an op share one element type unless its description says
    otherwise. `bf16` and `f16` tensors are stored in their type and
    computed in `f32`: each op rounds its result once
    (`tfm-widen-low-precision`).

    Two discardable attributes tie the compiler's levels together, checked by
    the dialect wherever they appear: `tfm.signature` (a `#tfm.signature`) on
    the model function, and `tfm.task` on the functions the CPU lowerings
    outline for tfm-dispatch-tasks to hand to the caller's threads,
    `tfm.exec_threads` on the declaration whose calls tfm-dispatch-tasks
    replaces by the caller's thread count (so that a lowering can size its
    tasks to the threads that run them), and `tfm.workspace_size` naming
    the function that sizes a model's workspace.
  }];
  let cppNamespace = "::mlir::tfm";
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
  let discardableAttrs = (ins
    "::mlir::tfm::SignatureAttr":$signature,
    "::mlir::UnitAttr":$task,
    "::mlir::UnitAttr":$exec_threads,
    "::mlir::FlatSymbolRefAttr":$workspace_size
  );
}

class Tfm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tfm_Dialect, mnemonic, traits>;

/// The float element types. bf16 and f16 are storage types: an op on them
/// computes in f32 (f64 when an operand is f64) and rounds its result to its
/// type, to nearest even (`tfm-widen-low-precision`).
def Tfm_FloatTensor : RankedTensorOf<[F32, F64, BF16, F16]>;
def Tfm_IndexTensor : RankedTensorOf<[I32, I64]>;
/// An attention mask: boolean, or float values added to the scores.
def Tfm_MaskTensor : RankedTensorOf<[I1, F32, F64, BF16, F16]>;
/// Tensors the elementwise, comparison and reduction ops compute on: the
/// floats and the signed integers (i8 wraps, as PyTorch's int8 does).
def Tfm_NumericTensor : RankedTensorOf<[F32, F64, BF16, F16, I8, I32, I64]>;
def Tfm_BoolTensor : RankedTensorOf<[I1]>;
/// Every element type a model's tensors may have.
def Tfm_AnyDtypeTensor
    : RankedTensorOf<[F32, F64, BF16, F16, I8, I32, I64, I1]>;
def Tfm_RankedTensorOrMemRef : AnyTypeOf<[AnyRankedTensor, AnyMemRef]>;

#endif // TFM_BASE_TD
