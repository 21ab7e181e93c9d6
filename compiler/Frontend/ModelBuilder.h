//===- ModelBuilder.h - Build tfm models from C++ ---------------*- C++ -*-===//
//
// The C++ API for describing a model, and what the .tfm parser is built on.
// It tracks symbolic dimensions by name (`seq`, `batch`) so that shape errors
// name them, builds tfm ops with MLIR types (symbols become `?`), and records
// the model's signature for the artifact's ABI (docs/artifact.md).
//
// Every method reports problems as MLIR diagnostics at the given location and
// returns failure; nothing asserts on user input.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_FRONTEND_MODELBUILDER_H
#define TFM_COMPILER_FRONTEND_MODELBUILDER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>

namespace mlir::tfm {

/// A dimension: a static size, or a named size fixed at run time.
struct Dim {
  int64_t size = 0;
  std::string symbol;

  static Dim of(int64_t size) { return {size, {}}; }
  static Dim named(std::string symbol) { return {0, std::move(symbol)}; }
  bool isSymbolic() const { return !symbol.empty(); }
  bool operator==(const Dim &other) const {
    return isSymbolic() ? symbol == other.symbol
                        : !other.isSymbolic() && size == other.size;
  }
  bool operator!=(const Dim &other) const { return !(*this == other); }
  std::string str() const;
};

using Shape = SmallVector<Dim, 4>;
std::string formatShape(ArrayRef<Dim> shape);

/// A tensor value of the model with its symbolic shape.
struct Tensor {
  Value value;
  Shape shape;
  Type elementType() const {
    return cast<ShapedType>(value.getType()).getElementType();
  }
  int64_t rank() const { return shape.size(); }
};

/// Where the builder learns a weight's dtype and shape from.
class WeightShapes {
public:
  virtual ~WeightShapes();
  struct Info {
    Type elementType;
    SmallVector<int64_t> shape;
  };
  /// The weight called `name`, or nullopt if there is none.
  virtual std::optional<Info> lookup(MLIRContext *ctx, StringRef name) = 0;
};

/// Names of the weights of a multi-head attention layer.
struct MultiHeadAttentionWeights {
  /// `<prefix>.in_proj_weight` [3E, E] holds q, k and v stacked, as in
  /// nn.MultiheadAttention; empty when separate q/k/v weights are used.
  std::string inProjWeight, inProjBias;
  std::string qWeight, kWeight, vWeight, qBias, kBias, vBias;
  std::string outWeight, outBias;

  /// nn.MultiheadAttention's state_dict names under `prefix` (which may be
  /// empty): in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias.
  static MultiHeadAttentionWeights pytorch(StringRef prefix, bool bias);
};

class ModelBuilder {
public:
  /// Starts the model `name` (letters, digits and '_'); weights' shapes come
  /// from `weights` (may be null when the model declares none).
  ModelBuilder(MLIRContext *ctx, StringRef name, Location loc,
               WeightShapes *weights);

  FailureOr<Tensor> input(StringRef name, Type elementType, ArrayRef<Dim> shape,
                          Location loc);
  FailureOr<Tensor> weight(StringRef name, Location loc);
  LogicalResult output(StringRef name, const Tensor &value, Location loc);

  FailureOr<Tensor> matmul(const Tensor &lhs, const Tensor &rhs, Location loc);
  FailureOr<Tensor> transpose(const Tensor &x, int64_t dim0, int64_t dim1,
                              Location loc);
  FailureOr<Tensor> scale(const Tensor &x, double factor, bool divide,
                          Location loc);
  FailureOr<Tensor> softmax(const Tensor &x, int64_t dim, Location loc);
  FailureOr<Tensor> add(const Tensor &lhs, const Tensor &rhs, Location loc);
  FailureOr<Tensor> concat(ArrayRef<Tensor> inputs, int64_t dim, Location loc);
  /// `mask ? value : x` elementwise, like `Tensor.masked_fill`. The mask
  /// aligns with `x` at the trailing dims (a 1 or a missing dim broadcasts);
  /// it is i1, or i32/i64 where nonzero means true (models take no i1
  /// inputs). Fill attention scores with -inf to mask them out.
  FailureOr<Tensor> maskedFill(const Tensor &x, const Tensor &mask,
                               double value, Location loc);
  /// Scores `[..., queries, keys]` with key j > query i set to -inf.
  FailureOr<Tensor> causalMask(const Tensor &x, Location loc);
  FailureOr<Tensor> linear(const Tensor &x, const Tensor &weight,
                           const std::optional<Tensor> &bias, Location loc);
  FailureOr<Tensor> embedding(const Tensor &ids, const Tensor &table,
                              Location loc);
  FailureOr<Tensor> positionalEncoding(const Tensor &x, Location loc);
  FailureOr<Tensor> sdpa(const Tensor &q, const Tensor &k, const Tensor &v,
                         std::optional<double> scale, Location loc);
  FailureOr<Tensor> multiHeadAttention(const Tensor &q, const Tensor &k,
                                       const Tensor &v, int64_t heads,
                                       const MultiHeadAttentionWeights &names,
                                       Location loc);

  /// Finishes the function (outputs in the order given) and hands over the
  /// module. Fails if there is no output.
  FailureOr<OwningOpRef<ModuleOp>> finish(Location loc);

  MLIRContext *getContext() { return builder.getContext(); }

private:
  FailureOr<int64_t> normalizeDim(const Tensor &x, int64_t dim, Location loc);
  LogicalResult checkDistinctInHeader(StringRef name, Location loc);
  FailureOr<Shape> broadcast(ArrayRef<Dim> a, ArrayRef<Dim> b, Location loc,
                             StringRef what);
  RankedTensorType typeOf(ArrayRef<Dim> shape, Type elementType);
  FailureOr<Tensor> sliceRows(const Tensor &x, int64_t begin, int64_t count,
                              Location loc);

  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  std::string modelName;
  WeightShapes *weights;
  SmallVector<std::string> inputNames, outputNames, symbols;
  SmallVector<Attribute> inputSignature, outputSignature;
  SmallVector<Value> outputs;
  llvm::StringMap<Tensor> weightCache;
  Operation *lastWeight = nullptr;
};

} // namespace mlir::tfm

#endif // TFM_COMPILER_FRONTEND_MODELBUILDER_H
