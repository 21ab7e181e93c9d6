//===- TfmAttrs.td - Attributes of the tfm dialect ---------*- tablegen -*-===//
//
// The contract between the frontend, the compiler's late passes and the
// artifact: a model function's ABI signature, as a typed attribute checked
// by its verifier rather than a dictionary each reader parses by hand.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ATTRS_TD
#define TFM_ATTRS_TD

include "dialects/Tfm/IR/TfmBase.td"
include "dialects/Tfm/IR/TfmEnums.td"
include "mlir/IR/AttrTypeBase.td"

class Tfm_Attr<string name, string attrMnemonic>
    : AttrDef<Tfm_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def Tfm_TensorSpecAttr : Tfm_Attr<"TensorSpec", "tensor"> {
  let summary = "One input or output of a model's signature";
  let description = [{
    A tensor the model's C entry point takes or fills: its name (a C
    identifier in the generated header), its element type (`f32`, `f64`,
    `i32`, `i64` or `i1`, which the header spells `bool`) and its shape. Each
    dimension is a static size or the name of one of the signature's symbols,
    which the caller passes at run time. `cache = true` marks an input the
    model reads and writes in place (docs/generation.md).

    Example:

    ```mlir
    #tfm.tensor<name = "x", elementType = f32, shape = ["batch", 512]>
    ```
  }];
  let parameters = (ins "StringAttr":$name, "Type":$elementType,
      "ArrayAttr":$shape, DefaultValuedParameter<"bool", "false">:$cache);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The dtype name of the header and the metadata: f32, f64, i32, i64,
    /// bool, bf16, f16 or i8. Empty for an element type a signature cannot
    /// carry.
    static ::llvm::StringRef dtypeName(::mlir::Type elementType);
  }];
}

def Tfm_SignatureErrorAttr : Tfm_Attr<"SignatureError", "error"> {
  let summary = "A non-zero status code a model may return";
  let description = [{
    One run-time check of the model: the status it returns when the check
    fails, and the message the runtime prints for it.

    Example:

    ```mlir
    #tfm.error<code = 1, message = "token id out of range">
    ```
  }];
  let parameters = (ins "int64_t":$code, "StringAttr":$message);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Tfm_SignatureAttr : Tfm_Attr<"Signature", "signature"> {
  let summary = "A model function's ABI signature";
  let description = [{
    Attached as the discardable `tfm.signature` attribute to the function a
    model compiles to. It names the model (the prefix of every symbol of the
    artifact), the symbolic dimensions its entry point takes at run time, its
    inputs and outputs (`#tfm.tensor`), the status codes of its run-time
    checks (`#tfm.error`, optional) and, for a GPU artifact, `device =
    "cuda"`. tfm-results-to-out-params, tfm-emit-entry-points, the header
    emitter and the metadata JSON all read it.

    Example:

    ```mlir
    func.func @m(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {
      tfm.signature = #tfm.signature<model = "m", symbols = ["n"],
        inputs = [#tfm.tensor<name = "x", elementType = f32, shape = ["n", 4]>],
        outputs = [#tfm.tensor<name = "y", elementType = f32, shape = ["n", 4]>]>}
    ```
  }];
  let parameters = (ins "StringAttr":$model, "ArrayAttr":$symbols,
      "ArrayAttr":$inputs, "ArrayAttr":$outputs,
      OptionalParameter<"ArrayAttr">:$errors,
      OptionalParameter<"StringAttr">:$device);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    auto getInputSpecs() const {
      return getInputs().getAsRange<TensorSpecAttr>();
    }
    auto getOutputSpecs() const {
      return getOutputs().getAsRange<TensorSpecAttr>();
    }
    auto getErrorSpecs() const {
      return (getErrors() ? getErrors() : ::mlir::ArrayAttr::get(
                                              getContext(), {}))
          .getAsRange<SignatureErrorAttr>();
    }
    /// A copy with another model name.
    SignatureAttr withModel(::llvm::StringRef name) const;
    /// A copy with another device ("" for the host).
    SignatureAttr withDevice(::llvm::StringRef name) const;
  }];
}

#endif // TFM_ATTRS_TD
