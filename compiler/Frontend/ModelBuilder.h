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

#include "dialects/Tfm/IR/TfmDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>

namespace mlir::tfm {

/// Limits on the shapes that enter a model (inputs, weights and outputs),
/// checked where they enter: the runtime refuses ranks above TFM_MAX_RANK,
/// and sizes beyond these bounds would overflow the generated code's offset
/// arithmetic long before any machine could hold the data.
constexpr int64_t kMaxRank = 8;
constexpr int64_t kMaxDimension = int64_t(1) << 40;
/// The most elements a tensor may have, counting symbolic dimensions as 1
/// and zero-sized ones as 1 (an empty tensor's other dimensions still reach
/// the offset arithmetic).
constexpr int64_t kMaxElements = int64_t(1) << 40;
/// The most elements of one weight, whose data is embedded in the object as
/// one LLVM constant (16 GiB of f32).
constexpr int64_t kMaxWeightElements = (int64_t(1) << 32) - 1;
/// The most pieces one split may make (each is a value to name).
constexpr int64_t kMaxSplitPieces = 4096;

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

/// bf16 and f16: element types that tensors are stored in and that compute
/// in f32 (docs/language.md#element-types).
inline bool isLowPrecisionFloat(Type type) {
  return type.isBF16() || type.isF16();
}

using Shape = SmallVector<Dim, 4>;
std::string formatShape(ArrayRef<Dim> shape);
/// Checks `shape` against kMaxRank, kMaxDimension and kMaxElements; `what`
/// names the tensor in the error. Inputs, weights and outputs are checked
/// where they enter; results that can outgrow their operands (broadcasts,
/// reshapes) where they are made.
LogicalResult checkShapeLimits(ArrayRef<Dim> shape, Location loc,
                               const Twine &what);

/// A tensor value of the model with its symbolic shape.
struct Tensor {
  Value value;
  Shape shape;
  Type elementType() const {
    return cast<ShapedType>(value.getType()).getElementType();
  }
  int64_t rank() const { return shape.size(); }
  bool sameElementType(const Tensor &other) const {
    return elementType() == other.elementType();
  }
};

/// Where the builder learns a weight's dtype and shape from.
class WeightShapes {
public:
  virtual ~WeightShapes();
  struct Info {
    Type elementType;
    SmallVector<int64_t> shape;
    /// Set when the file holds the weight in a type the compiler cannot
    /// bind: why, to follow "weight 'NAME' ".
    std::string unsupported;
  };
  /// The weight called `name`, or nullopt if there is none.
  virtual std::optional<Info> lookup(MLIRContext *ctx, StringRef name) = 0;

  /// A hyper-parameter the checkpoint states (GGUF metadata, the
  /// config.json beside a .safetensors file), for the language's config().
  struct ConfigValue {
    enum Kind { number, string, boolean, unsupported } kind = number;
    double num = 0;
    bool isInteger = false;
    bool flag = false;
    /// A string's text; for `unsupported`, what the value is instead.
    std::string str;
  };
  /// The value of `key`, or nullopt if the checkpoint does not state it.
  virtual std::optional<ConfigValue> config(StringRef /*key*/) {
    return std::nullopt;
  }
  /// Where config() looks, for messages ("model.gguf's metadata"); empty
  /// without a weights file.
  virtual std::string configSource() const { return ""; }
  /// Whether config() reports each default it takes as a remark
  /// (tfm-compile --remarks): a value the checkpoint leaves out is the
  /// .tfm's assumption, which users should see.
  virtual bool remarksOnDefaults() const { return false; }
};

/// Names of the weights of a multi-head attention layer.
struct MultiHeadAttentionWeights {
  /// `<prefix>.in_proj_weight` [3E, E] holds q, k and v stacked, as in
  /// nn.MultiheadAttention; empty when separate q/k/v weights are used.
  /// `inProjBias` [3E] may also go with separate q/k/v weights (PyTorch's
  /// layout when kdim or vdim differ from E).
  std::string inProjWeight, inProjBias;
  std::string qWeight, kWeight, vWeight, qBias, kBias, vBias;
  std::string outWeight, outBias;
  /// Used instead of `inProjWeight` when the key or value features differ
  /// from the query's: nn.MultiheadAttention's `q_proj_weight [E, E]`,
  /// `k_proj_weight [E, kdim]`, `v_proj_weight [E, vdim]`.
  std::string qProjWeight, kProjWeight, vProjWeight;

  /// nn.MultiheadAttention's state_dict names under `prefix` (which may be
  /// empty): in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias,
  /// and q/k/v_proj_weight for kdim/vdim != E.
  static MultiHeadAttentionWeights pytorch(StringRef prefix, bool bias);
};

/// The options of nn.MultiheadAttention.forward (and the constructor's
/// batch_first; tfm defaults it to true).
struct MultiHeadAttentionOptions {
  /// [batch, seq, E] when true, [seq, batch, E] when false; unbatched
  /// [seq, E] inputs ignore it.
  bool batchFirst = true;
  /// [batch, Sk] ([Sk] unbatched); i1 true = ignore the key, or float added.
  std::optional<Tensor> keyPaddingMask;
  /// [Sq, Sk] or [batch * heads, Sq, Sk] ([heads, Sq, Sk] unbatched); i1
  /// true = not allowed to attend, or float added.
  std::optional<Tensor> attnMask;
  /// Also return the attention weights, averaged over the heads
  /// ([batch, Sq, Sk]) or per head ([batch, heads, Sq, Sk]).
  bool needWeights = false;
  bool averageAttnWeights = true;
};

/// The options of F.scaled_dot_product_attention.
struct SdpaOptions {
  /// Broadcastable to [..., Sq, Sk]: i1 true = takes part (SDPA's
  /// polarity), or float added to the scaled scores.
  std::optional<Tensor> attnMask;
  /// Key j masked for query i when j > i (top left aligned).
  bool isCausal = false;
  /// 1/sqrt(Dk) when unset.
  std::optional<double> scale;
  /// Attention over a key/value cache: i64 [batch], the valid keys of each
  /// sequence, and (causal only) the position of each sequence's first
  /// query among the keys. Either makes sdpa one tfm.attention whose kernel
  /// visits only the keys a query can see.
  std::optional<Tensor> kvLength, queryOffset;
  /// Causal only: a sliding window, each query sees the last `window`
  /// positions up to its own (Gemma's and Mistral's local layers).
  std::optional<int64_t> window;
};

/// Names of the weights of an encoder layer.
struct TransformerEncoderLayerWeights {
  MultiHeadAttentionWeights attention;
  std::string linear1Weight, linear1Bias, linear2Weight, linear2Bias;
  std::string norm1Weight, norm1Bias, norm2Weight, norm2Bias;

  /// nn.TransformerEncoderLayer's state_dict names under `prefix` (which
  /// may be empty): self_attn.*, linear1.*, linear2.*, norm1.*, norm2.*.
  static TransformerEncoderLayerWeights pytorch(StringRef prefix);
};

/// nn.TransformerEncoderLayer at inference (dropout is the identity).
struct TransformerEncoderLayerOptions {
  int64_t heads = 1;
  /// PyTorch's names without a prefix unless set (other checkpoints, such
  /// as Hugging Face's BERT, name each weight their own way).
  TransformerEncoderLayerWeights weights =
      TransformerEncoderLayerWeights::pytorch("");
  bool normFirst = false;
  /// "relu" or "gelu".
  std::string activation = "relu";
  double eps = 1e-5;
  bool batchFirst = true;
  std::optional<Tensor> srcMask, srcKeyPaddingMask;
};

/// The elementwise functions of two tensors (besides `add`).
enum class BinaryFn {
  sub,
  mul,
  div,
  maximum,
  minimum,
  pow,
  logicalAnd,
  logicalOr
};
/// The elementwise functions of one tensor.
enum class UnaryFn {
  exp,
  log,
  sqrt,
  rsqrt,
  tanh,
  erf,
  sin,
  cos,
  neg,
  abs,
  logicalNot
};

/// One item of `x[...]`: a single integer index (drops the dim), a slice
/// `start:stop` (either may be absent; negative counts from the end, bounds
/// clamp as in Python) or `...` (as many full slices as needed).
struct IndexItem {
  enum Kind { single, slice, ellipsis };
  Kind kind = slice;
  int64_t index = 0;
  std::optional<int64_t> start, stop;
};

/// Which dims of a head a rotary embedding pairs: `half` is transformers'
/// rotate_half (i with i + d/2), `pairs` llama.cpp's GGUF convention (2i
/// with 2i + 1; its converter permutes the Q/K weights to match).
enum class RopeStyle { half, pairs };
/// transformers' rope_scaling of the inverse frequencies.
enum class RopeScaling { none, linear, llama3 };
struct RopeOptions {
  double theta = 10000;
  /// The leading head dims rotated (partial rotary); all by default.
  std::optional<int64_t> rotaryDims;
  RopeStyle style = RopeStyle::half;
  RopeScaling scaling = RopeScaling::none;
  double factor = 1, lowFreqFactor = 1, highFreqFactor = 4;
  int64_t originalMaxPositions = 8192;
  /// llama.cpp's `rope_freqs.weight` (Llama 3.1 and later GGUF files store
  /// their scaling so): [rotary / 2] divisors of the inverse frequencies,
  /// applied after `scaling`.
  std::optional<Tensor> freqFactors;
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
  /// Where weights' shapes and the checkpoint's hyper-parameters come from;
  /// null without a weights file or declarations.
  WeightShapes *weightSource() const { return weights; }
  /// A caller-owned cache: an argument of the model, read and written in
  /// place (docs/generation.md). Its shape follows the input rules; it
  /// needs a static capacity where cache_append writes.
  FailureOr<Tensor> cache(StringRef name, Type elementType, ArrayRef<Dim> shape,
                          Location loc);
  /// Gives every float cache declared from now on this element type instead
  /// of its declared one (tfm-compile --kv-cache-dtype); null keeps the
  /// declarations.
  void setCacheElementType(Type type) { cacheElementType = type; }
  /// Writes `rows [B, ..., S, D]` into `view` (a cache, or `cache[i]` with
  /// static indices) at each sequence's `offset` (i64 [B]) along the view's
  /// second-to-last dim, and returns the updated view to attend over. A
  /// sequence whose rows do not fit is not written and the model returns
  /// a status code.
  FailureOr<Tensor> cacheAppend(const Tensor &view, const Tensor &rows,
                                const Tensor &offset, Location loc);
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
  /// nn.Embedding. An id outside [0, num) makes the model return status 1
  /// (docs/artifact.md); the lookup never reads outside the table.
  /// `paddingIdx` (only used in training by PyTorch) is checked and ignored.
  FailureOr<Tensor> embedding(const Tensor &ids, const Tensor &table,
                              Location loc,
                              std::optional<int64_t> paddingIdx = std::nullopt);
  /// The sinusoidal encoding [seq, dim] of x [..., seq, dim].
  FailureOr<Tensor> positionalEncoding(const Tensor &x, Location loc);
  /// Rows 0..seq-1 of a learned table [max_len, dim]; a longer sequence
  /// makes the model return status 2.
  FailureOr<Tensor>
  learnedPositionalEncoding(const Tensor &x, const Tensor &table, Location loc);
  /// nn.LayerNorm over the last dim; weight and bias [dim] are optional.
  FailureOr<Tensor> layerNorm(const Tensor &x,
                              const std::optional<Tensor> &weight,
                              const std::optional<Tensor> &bias, double eps,
                              Location loc);
  FailureOr<Tensor> relu(const Tensor &x, Location loc);
  /// `approximate` is "none" (erf) or "tanh", as in F.gelu.
  FailureOr<Tensor> gelu(const Tensor &x, GeluApproximation approximate,
                         Location loc);
  /// 1 / (1 + exp(-x)) and x * sigmoid(x) (F.silu).
  FailureOr<Tensor> sigmoid(const Tensor &x, Location loc);
  FailureOr<Tensor> silu(const Tensor &x, Location loc);
  /// transformers' LlamaRMSNorm over the last dim: x / sqrt(mean(x^2) +
  /// eps) * (weight_offset + weight); Gemma's norms use weight_offset 1.
  FailureOr<Tensor> rmsNorm(const Tensor &x,
                            const std::optional<Tensor> &weight, double eps,
                            double weightOffset, Location loc);
  /// Rotary position embedding of x [..., seq, head_dim] at `positions`
  /// (integers [..., seq]: token positions, a cache's offset included).
  FailureOr<Tensor> rope(const Tensor &x, const Tensor &positions,
                         const RopeOptions &options, Location loc);
  /// The identity (inference); p must lie in [0, 1].
  FailureOr<Tensor> dropout(const Tensor &x, double p, Location loc);
  FailureOr<Tensor> sdpa(const Tensor &q, const Tensor &k, const Tensor &v,
                         std::optional<double> scale, Location loc);
  FailureOr<Tensor> sdpa(const Tensor &q, const Tensor &k, const Tensor &v,
                         const SdpaOptions &options, Location loc);
  FailureOr<Tensor> multiHeadAttention(const Tensor &q, const Tensor &k,
                                       const Tensor &v, int64_t heads,
                                       const MultiHeadAttentionWeights &names,
                                       Location loc);
  /// The output, and the attention weights when options.needWeights.
  struct AttentionResult {
    Tensor output;
    std::optional<Tensor> weights;
  };
  FailureOr<AttentionResult>
  multiHeadAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                     int64_t heads, const MultiHeadAttentionWeights &names,
                     const MultiHeadAttentionOptions &options, Location loc);
  FailureOr<Tensor>
  transformerEncoderLayer(const Tensor &x,
                          const TransformerEncoderLayerOptions &options,
                          Location loc);

  /// A rank-0 tensor holding `value` (numbers in expressions with tensors).
  FailureOr<Tensor> constant(double value, Type elementType, Location loc);
  /// Elementwise with NumPy broadcasting; both operands of one element type
  /// (floats for div and pow, bool for the logical ones).
  FailureOr<Tensor> binary(BinaryFn fn, const Tensor &lhs, const Tensor &rhs,
                           Location loc);
  FailureOr<Tensor> unary(UnaryFn fn, const Tensor &x, Location loc);
  /// A bool tensor: `lhs <fn> rhs` with broadcasting.
  FailureOr<Tensor> compare(ComparePredicate fn, const Tensor &lhs,
                            const Tensor &rhs, Location loc);
  /// `condition ? lhs : rhs`, all three broadcast together (torch.where).
  FailureOr<Tensor> where(const Tensor &condition, const Tensor &lhs,
                          const Tensor &rhs, Location loc);
  FailureOr<Tensor> castTo(const Tensor &x, Type elementType, Location loc);
  /// torch.sum/mean/amax/amin over `dims` (negative count from the end;
  /// empty means all).
  FailureOr<Tensor> reduce(ReduceKind fn, const Tensor &x,
                           ArrayRef<int64_t> dims, bool keepdim, Location loc);
  /// torch.reshape: each target dim is a size, a named dimension, or
  /// Dim::of(-1) (at most one), inferred from the element count.
  FailureOr<Tensor> reshape(const Tensor &x, ArrayRef<Dim> shape, Location loc);
  FailureOr<Tensor> unsqueeze(const Tensor &x, int64_t dim, Location loc);
  /// Drops the given dims, which must be 1; all static 1s when `dims` is
  /// empty.
  FailureOr<Tensor> squeeze(const Tensor &x, ArrayRef<int64_t> dims,
                            Location loc);
  FailureOr<Tensor> permute(const Tensor &x, ArrayRef<int64_t> permutation,
                            Location loc);

  /// `x[items]`, like PyTorch's basic indexing. An integer index into a
  /// named dim is checked at run time (a status code, docs/artifact.md) and
  /// never reads outside `x`.
  FailureOr<Tensor> index(const Tensor &x, ArrayRef<IndexItem> items,
                          Location loc);
  /// torch.split along a static dim: chunks of `sizes[0]` (the last may be
  /// smaller) when `chunked`, else pieces of the given sizes.
  FailureOr<std::vector<Tensor>> split(const Tensor &x, ArrayRef<int64_t> sizes,
                                       bool chunked, int64_t dim, Location loc);
  /// torch.arange(start, end, step) as i64; a named `end` needs start 0
  /// and step 1 (the result keeps the name: `arange(seq)`).
  FailureOr<Tensor> arange(int64_t start, const Dim &end, int64_t step,
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
  /// The run-time size of `d` as an index: a constant, a dim of `x` with
  /// that name, or of the input that declared it; products for the dims a
  /// reshape derives.
  FailureOr<Value> sizeOf(const Dim &d, const Tensor &x, Location loc);
  /// x repeated along its size-1 dims to `shape` (same rank): a copy.
  FailureOr<Tensor> broadcastTo(const Tensor &x, ArrayRef<Dim> shape,
                                Location loc);
  /// `source`, or where `ok` is false a zero tensor of its type with one
  /// row along `dim`: what an index checked at run time reads from.
  Value safeSource(Value source, const Tensor &x, int64_t dim, Value ok,
                   Location loc);
  /// A layer with weights of another float type, or a function composed of
  /// several ops, on a bf16/f16 `x`: `build` runs on `x` widened to `type`
  /// (the weights' f32), and its result is rounded back to x's type once.
  FailureOr<Tensor>
  computeIn(Type type, const Tensor &x, Location loc,
            function_ref<FailureOr<Tensor>(const Tensor &)> build);
  /// The element type check and broadcast shared by the elementwise ops.
  FailureOr<Shape> broadcastAll(ArrayRef<const Tensor *> operands, Location loc,
                                StringRef what);
  /// sdpa over a cache (kv_length / query_offset): one tfm.attention.
  FailureOr<Tensor> cachedAttention(const Tensor &q, const Tensor &k,
                                    const Tensor &v, const SdpaOptions &options,
                                    const Shape &shape, Location loc);
  FailureOr<Tensor> sliceRows(const Tensor &x, int64_t begin, int64_t count,
                              Location loc);
  /// Checks that `mask` can mask scores `scores` (i1 or x's float type,
  /// broadcastable); `what` names it in errors.
  LogicalResult checkMask(const Tensor &mask, ArrayRef<Dim> scores,
                          Type floatType, StringRef what, Location loc);
  /// The status code of a run-time check that reports `message`: the code of
  /// an earlier check with the same message (the same table), else
  /// `preferred` when no other check uses it, else the next free code, so
  /// that every code names one check (docs/artifact.md).
  int32_t statusCode(int32_t preferred, const std::string &message) const;
  /// Records a run-time check's i32 status and what its code means.
  void addStatus(Value status, int32_t code, std::string message);

  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  std::string modelName;
  WeightShapes *weights;
  SmallVector<std::string> inputNames, outputNames, symbols;
  SmallVector<Attribute> inputSignature, outputSignature;
  SmallVector<Value> outputs;
  /// The run-time checks' statuses, in program order, and the meaning of
  /// their codes (docs/artifact.md).
  SmallVector<Value> statuses;
  SmallVector<std::pair<int32_t, std::string>> errors;
  llvm::StringMap<Tensor> weightCache;
  /// The input and dimension that declared each named dimension.
  llvm::StringMap<std::pair<Value, int64_t>> symbolSources;
  Operation *lastWeight = nullptr;
  /// Each cache: its name, the model argument, and its value after the
  /// appends so far (what the model returns, bufferized into the argument).
  struct CacheState {
    std::string name;
    Value argument, current;
    /// The last append into a slice, not yet inserted into `current`: the
    /// insert waits for the cache's next use so that the attention reading
    /// the appended slice (through a reshape too, as a grouped-query
    /// unsqueeze) comes first, and bufferization sees the slice written in
    /// place rather than read after the whole cache was rewritten.
    Value pendingSlice;
    tensor::ExtractSliceOp pendingAt;
  };
  /// Inserts `state`'s pending slice into its current value.
  void flushCacheAppend(CacheState &state);
  SmallVector<CacheState> caches;
  Type cacheElementType;
};

} // namespace mlir::tfm

#endif // TFM_COMPILER_FRONTEND_MODELBUILDER_H
