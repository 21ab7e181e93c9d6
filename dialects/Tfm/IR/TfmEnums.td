//===- TfmEnums.td - Enumerations of the tfm dialect -------*- tablegen -*-===//
//
// Every closed set of choices an op carries, as a typed attribute: a pass
// switches over the enumerators (and the compiler says which case it
// forgot) instead of comparing strings that a typo would slip past.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENUMS_TD
#define TFM_ENUMS_TD

include "dialects/Tfm/IR/TfmBase.td"
include "mlir/IR/EnumAttr.td"

def Tfm_Activation : I32EnumAttr<"Activation",
    "an activation a packed linear layer applies in its epilogue", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"relu", 1>,
      I32EnumAttrCase<"gelu", 2>,
      I32EnumAttrCase<"gelu_tanh", 3>
    ]> {
  let cppNamespace = "::mlir::tfm";
  let genSpecializedAttr = 0;
}
def Tfm_ActivationAttr : EnumAttr<Tfm_Dialect, Tfm_Activation, "activation">;

def Tfm_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how tfm.gelu computes the Gaussian CDF: erf, or PyTorch's tanh form", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"tanh", 1>
    ]> {
  let cppNamespace = "::mlir::tfm";
  let genSpecializedAttr = 0;
}
def Tfm_GeluApproximationAttr
    : EnumAttr<Tfm_Dialect, Tfm_GeluApproximation, "approximate">;

def Tfm_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "the relation tfm.compare tests", [
      I32EnumAttrCase<"lt", 0>,
      I32EnumAttrCase<"le", 1>,
      I32EnumAttrCase<"gt", 2>,
      I32EnumAttrCase<"ge", 3>,
      I32EnumAttrCase<"eq", 4>,
      I32EnumAttrCase<"ne", 5>
    ]> {
  let cppNamespace = "::mlir::tfm";
  let genSpecializedAttr = 0;
}
def Tfm_ComparePredicateAttr
    : EnumAttr<Tfm_Dialect, Tfm_ComparePredicate, "predicate">;

def Tfm_ReduceKind : I32EnumAttr<"ReduceKind",
    "how tfm.reduce combines the reduced elements", [
      I32EnumAttrCase<"sum", 0>,
      I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"max", 2>,
      I32EnumAttrCase<"min", 3>
    ]> {
  let cppNamespace = "::mlir::tfm";
  let genSpecializedAttr = 0;
}
def Tfm_ReduceKindAttr : EnumAttr<Tfm_Dialect, Tfm_ReduceKind, "reduce_kind">;

#endif // TFM_ENUMS_TD
