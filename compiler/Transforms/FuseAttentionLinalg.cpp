//===- FuseAttentionLinalg.cpp - Attention chains over linalg -------------===//
//
// Recognizes the attention chain after convert-tfm-to-linalg and as it is
// written by hand in linalg: contractions as `linalg.generic`,
// `linalg.matmul` or `linalg.batch_matmul` (read through their indexing
// maps, so a key transposed by the maps or by `linalg.transpose` is the same
// thing), elementwise generics for the scale and the masks, and the softmax
// as `linalg.softmax` or spelled out as its decomposition writes it.
//
// Everything is decided from indexing maps and payloads rather than op
// names, so the named and generic spellings share one matcher.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/AttentionChain.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

namespace {

//===----------------------------------------------------------------------===//
// Payload and map helpers
//===----------------------------------------------------------------------===//

/// The one value a linalg op's payload yields, or null.
Value yieldedValue(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body)
    return {};
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return {};
  return yield.getOperand(0);
}

/// The op of type `OpTy` whose result the payload yields, or null.
template <typename OpTy> OpTy yieldedBy(linalg::LinalgOp op) {
  Value v = op ? yieldedValue(op) : Value();
  return v ? v.getDefiningOp<OpTy>() : OpTy();
}

/// The input whose payload argument `v` is, or -1 (not an argument, or the
/// init's).
int inputIndexOf(linalg::LinalgOp op, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != op.getBlock() ||
      arg.getArgNumber() >= op.getNumDpsInputs())
    return -1;
  return arg.getArgNumber();
}

bool isInitArg(linalg::LinalgOp op, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == op.getBlock() &&
         arg.getArgNumber() == op.getNumDpsInputs();
}

/// A float constant: scalar, or a splat tensor.
std::optional<double> getConstantFloat(Value v) {
  FloatAttr scalar;
  if (matchPattern(v, m_Constant(&scalar)))
    return scalar.getValueAsDouble();
  DenseFPElementsAttr splat;
  if (matchPattern(v, m_Constant(&splat)) && splat.isSplat())
    return splat.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

std::string formatDouble(double value) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%g", value);
  return s;
}

/// Whether a contraction starts from zeros (else it would add its init to
/// the product, which tfm.attention does not).
bool isZeroInit(Value init) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    init = fill.getInputs()[0];
  std::optional<double> c = getConstantFloat(init);
  return c && *c == 0.0;
}

/// `dN` for a map result that is a plain loop dim, else nullopt.
std::optional<unsigned> dimOf(AffineExpr e) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return d.getPosition();
  return std::nullopt;
}

/// The loop a map leaves out when it reads every other loop in order (a
/// reduction's output, a row-broadcast operand), else nullopt.
std::optional<unsigned> droppedDim(AffineMap map) {
  if (map.getNumResults() + 1 != map.getNumDims())
    return std::nullopt;
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults()) {
    std::optional<unsigned> d = dimOf(e);
    if (!d)
      return std::nullopt;
    dims.push_back(*d);
  }
  // Results read their own loop up to the dropped one, the next one after.
  unsigned dropped = 0;
  while (dropped < dims.size() && dims[dropped] == dropped)
    ++dropped;
  for (unsigned i = dropped; i < dims.size(); ++i)
    if (dims[i] != i + 1)
      return std::nullopt;
  return dropped;
}

/// Whether `map` reads an operand of `shape` the way tfm.attention reads its
/// mask: aligned with the loops at the trailing end, broadcast only along
/// missing leading dims and size-1 dims.
bool isTrailingBroadcast(AffineMap map, ArrayRef<int64_t> shape) {
  unsigned numLoops = map.getNumDims(), rank = map.getNumResults();
  if (rank > numLoops || rank != shape.size())
    return false;
  for (unsigned i = 0; i < rank; ++i) {
    AffineExpr e = map.getResult(i);
    if (std::optional<unsigned> d = dimOf(e)) {
      if (*d != numLoops - rank + i)
        return false;
      continue;
    }
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (!c || c.getValue() != 0 || shape[i] != 1)
      return false;
  }
  return true;
}

/// A pure-tensor generic computing one result per element: all loops
/// parallel, identity output, the output's old value unused.
bool isElementwise(linalg::LinalgOp op) {
  return op.hasPureTensorSemantics() && op.getNumDpsInits() == 1 &&
         op->getNumResults() == 1 && op.getNumReductionLoops() == 0 &&
         op.getIndexingMapsArray().back().isIdentity() &&
         !op.payloadUsesValueFromOperand(op.getDpsInitOperand(0));
}

/// A linalg op with one reduction loop over two inputs: the shape of a
/// matrix product, before its payload and maps are checked.
bool looksLikeContraction(linalg::LinalgOp op) {
  return op.hasPureTensorSemantics() && op.getNumDpsInputs() == 2 &&
         op.getNumDpsInits() == 1 && op.getNumReductionLoops() == 1;
}

/// Whether `v` comes from a contraction through elementwise generics; tells
/// the scores from a mask or a scale tensor.
bool reachesContraction(Value v, int depth = 8) {
  auto op = v.getDefiningOp<linalg::LinalgOp>();
  if (!op || depth == 0)
    return false;
  if (looksLikeContraction(op))
    return true;
  if (!isElementwise(op))
    return false;
  for (OpOperand *input : op.getDpsInputOperands())
    if (op.getMatchingIndexingMap(input).isIdentity() &&
        reachesContraction(input->get(), depth - 1))
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// A matrix product `out[b..., row, col] = sum_red lhs * rhs` read through
/// the op's indexing maps.
struct Contraction {
  linalg::LinalgOp op;
  /// Loops of the result's batch dims (in result order), of its last two
  /// dims, and the reduction loop.
  SmallVector<unsigned> batch;
  unsigned row = 0, col = 0, red = 0;
  /// Which input carries the row loop (the other carries the column loop).
  unsigned rowInput = 0;
  unsigned colInput() const { return 1 - rowInput; }
};

enum class Layout { Normal, Transposed, Other };

/// How input `input` of `c` holds its last two dims relative to loops
/// (`first`, `second`): in this order, swapped, or in some other way
/// (batch dims reordered or broadcast).
Layout layoutOf(const Contraction &c, unsigned input, unsigned first,
                unsigned second) {
  AffineMap map = linalg::LinalgOp(c.op).getIndexingMapsArray()[input];
  size_t batch = c.batch.size();
  if (map.getNumResults() != batch + 2)
    return Layout::Other;
  for (size_t i = 0; i < batch; ++i)
    if (dimOf(map.getResult(i)) != c.batch[i])
      return Layout::Other;
  std::optional<unsigned> a = dimOf(map.getResult(batch)),
                          b = dimOf(map.getResult(batch + 1));
  if (a == first && b == second)
    return Layout::Normal;
  if (a == second && b == first)
    return Layout::Transposed;
  return Layout::Other;
}

/// Reads `op` as a contraction; `what` names it in the reasons.
FailureOr<Contraction> matchContraction(linalg::LinalgOp op, StringRef what,
                                        std::string &why) {
  auto fail = [&](const Twine &reason) {
    why = reason.str();
    return failure();
  };
  // Both callers have seen two inputs, one init and one reduction loop.
  assert(looksLikeContraction(op) && "not a contraction of two tensors");
  Type lhs = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type rhs = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
  Type out = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  if (lhs != rhs || lhs != out) {
    std::string types;
    llvm::raw_string_ostream os(types);
    os << lhs << ", " << rhs << " -> " << out;
    return fail("element types differ in the " + what + " (" + types + ")");
  }

  // out + lhs * rhs, in any operand order.
  auto add = yieldedBy<arith::AddFOp>(op);
  arith::MulFOp mul;
  if (add) {
    Value acc = add.getLhs(), product = add.getRhs();
    if (!isInitArg(op, acc))
      std::swap(acc, product);
    mul = product.getDefiningOp<arith::MulFOp>();
    if (!isInitArg(op, acc) || !mul ||
        inputIndexOf(op, mul.getLhs()) + inputIndexOf(op, mul.getRhs()) != 1)
      mul = nullptr;
  }
  if (!mul)
    return fail("the " + what + " is not a multiply-accumulate");

  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap outMap = maps[2];
  unsigned numLoops = op.getNumLoops();
  if (!outMap.isProjectedPermutation() ||
      outMap.getNumResults() + 1 != numLoops || numLoops < 3)
    return fail("the " + what + " result is not indexed by its parallel loops");
  Contraction c;
  c.op = op;
  unsigned rank = outMap.getNumResults();
  for (unsigned i = 0; i + 2 < rank; ++i)
    c.batch.push_back(outMap.getDimPosition(i));
  c.row = outMap.getDimPosition(rank - 2);
  c.col = outMap.getDimPosition(rank - 1);
  for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
    if (type == utils::IteratorType::reduction)
      c.red = i;
  c.rowInput = maps[0].isFunctionOfDim(c.row) ? 0 : 1;
  if (!maps[c.rowInput].isFunctionOfDim(c.row) ||
      !maps[c.colInput()].isFunctionOfDim(c.col))
    return fail("the " + what + " is an outer product along one operand");
  if (!isZeroInit(op.getDpsInits()[0]))
    return fail("the " + what + " accumulates into a non-zero init");
  return c;
}

/// The operand of a contraction as the fused op wants it, from a layout
/// relative to the wanted (`first`, `second`) order.
FailureOr<ChainOperand> operandFrom(const Contraction &c, unsigned input,
                                    unsigned first, unsigned second) {
  Value v = linalg::LinalgOp(c.op).getDpsInputs()[input];
  switch (layoutOf(c, input, first, second)) {
  case Layout::Normal:
    return ChainOperand{v, false};
  case Layout::Transposed:
    return ChainOperand{v, true};
  case Layout::Other:
    return failure();
  }
  llvm_unreachable("unknown layout");
}

//===----------------------------------------------------------------------===//
// Elementwise steps between the scores and the softmax
//===----------------------------------------------------------------------===//

/// One elementwise generic of the chain and what it does to the scores.
struct Step {
  enum Kind { Scale, AdditiveMask, BooleanMask, Causal } kind;
  /// The input holding the scores.
  unsigned scoresInput = 0;
  double factor = 1.0;
  Value mask;
};

/// `pred(lhs, rhs)` as `swapped(rhs, lhs)`.
arith::CmpIPredicate swapOperands(arith::CmpIPredicate pred) {
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::ugt:
    return P::ult;
  case P::ult:
    return P::ugt;
  case P::uge:
    return P::ule;
  case P::ule:
    return P::uge;
  case P::sgt:
    return P::slt;
  case P::slt:
    return P::sgt;
  case P::sge:
    return P::sle;
  case P::sle:
    return P::sge;
  default:
    return pred;
  }
}

/// The input of `op` that `v` is, when it is read with the identity map
/// (same shape as the result); -1 otherwise.
int identityInput(linalg::LinalgOp op, Value v) {
  int i = inputIndexOf(op, v);
  if (i < 0 || !op.getIndexingMapsArray()[i].isIdentity())
    return -1;
  return i;
}

/// Picks which of two payload values is the scores: the one read with the
/// identity map that comes from the contraction, else the first.
std::pair<Value, Value> scoresFirst(linalg::LinalgOp op, Value a, Value b) {
  auto fromScores = [&](Value v) {
    int i = identityInput(op, v);
    return i >= 0 && reachesContraction(op.getDpsInputs()[i]);
  };
  if (!fromScores(a) && fromScores(b))
    return {b, a};
  return {a, b};
}

/// Classifies an elementwise generic. Returns failure with `why` empty when
/// the op is no step of a chain, and with `why` set when it is one that
/// cannot be fused.
FailureOr<Step> classifyStep(linalg::LinalgOp op, std::string &why) {
  why.clear();
  if (!isElementwise(op))
    return failure();
  Value y = yieldedValue(op);
  if (!y)
    return failure();
  auto refuse = [&](const Twine &reason) {
    why = reason.str();
    return failure();
  };
  Step step;

  // Scale: scores * c, c * scores, scores / c.
  if (isa_and_nonnull<arith::MulFOp, arith::DivFOp>(y.getDefiningOp())) {
    Operation *binary = y.getDefiningOp();
    bool divide = isa<arith::DivFOp>(binary);
    Value scores = binary->getOperand(0), other = binary->getOperand(1);
    if (!divide)
      std::tie(scores, other) = scoresFirst(op, scores, other);
    int s = identityInput(op, scores);
    if (s < 0) {
      if (divide && identityInput(op, other) >= 0)
        return refuse("the scores are divided into a value, not by one");
      return failure();
    }
    step.kind = Step::Scale;
    step.scoresInput = s;
    Value constant = other;
    if (int i = inputIndexOf(op, other); i >= 0) {
      // A tensor operand is uniform only when every element reads one value.
      AffineMap map = op.getIndexingMapsArray()[i];
      if (llvm::any_of(map.getResults(),
                       [](AffineExpr e) { return dimOf(e).has_value(); }))
        return refuse("the scale is not uniform: the scores are multiplied "
                      "elementwise by a tensor");
      constant = op.getDpsInputs()[i];
    }
    std::optional<double> c = getConstantFloat(constant);
    if (!c)
      return refuse("the scale is not a compile-time constant");
    if (divide) {
      if (*c == 0.0)
        return refuse("the scores are divided by zero");
      step.factor = 1.0 / *c;
    } else {
      step.factor = *c;
    }
    return step;
  }

  // Additive mask: scores + mask, mask + scores.
  if (auto add = y.getDefiningOp<arith::AddFOp>()) {
    auto [scores, mask] = scoresFirst(op, add.getLhs(), add.getRhs());
    int s = identityInput(op, scores), m = inputIndexOf(op, mask);
    if (s < 0 || m < 0 || m == s)
      return failure();
    Value maskValue = op.getDpsInputs()[m];
    auto maskType = cast<RankedTensorType>(maskValue.getType());
    if (!isTrailingBroadcast(op.getIndexingMapsArray()[m], maskType.getShape()))
      return refuse("the mask is not read aligned with the scores' trailing "
                    "dims");
    step.kind = Step::AdditiveMask;
    step.scoresInput = s;
    step.mask = maskValue;
    return step;
  }

  auto select = y.getDefiningOp<arith::SelectOp>();
  if (!select)
    return failure();
  Value onTrue = select.getTrueValue(), onFalse = select.getFalseValue();
  int s = identityInput(op, onFalse);
  Value fill = onTrue;
  bool fillWhenTrue = true;
  if (s < 0) {
    s = identityInput(op, onTrue);
    fill = onFalse;
    fillWhenTrue = false;
  }
  if (s < 0)
    return failure();
  std::optional<double> fillValue = getConstantFloat(fill);
  if (!fillValue)
    return failure();
  step.scoresInput = s;

  // Boolean mask: select(mask, -inf, scores).
  if (int m = inputIndexOf(op, select.getCondition()); m >= 0) {
    if (!(std::isinf(*fillValue) && *fillValue < 0))
      return refuse("the boolean mask fills with " + formatDouble(*fillValue) +
                    ", not -inf: only -inf masks remove scores");
    if (!fillWhenTrue)
      return refuse("the boolean mask keeps the scores where it is true; "
                    "tfm.attention removes them there");
    Value maskValue = op.getDpsInputs()[m];
    auto maskType = cast<RankedTensorType>(maskValue.getType());
    if (!isTrailingBroadcast(op.getIndexingMapsArray()[m], maskType.getShape()))
      return refuse("the mask is not read aligned with the scores' trailing "
                    "dims");
    step.kind = Step::BooleanMask;
    step.mask = maskValue;
    return step;
  }

  // Causal mask: select(key index > query index, -inf, scores).
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return failure();
  auto indexLoop = [](Value v) -> std::optional<uint64_t> {
    if (auto index = v.getDefiningOp<linalg::IndexOp>())
      return index.getDim();
    return std::nullopt;
  };
  std::optional<uint64_t> a = indexLoop(cmp.getLhs()),
                          b = indexLoop(cmp.getRhs());
  unsigned query = op.getNumLoops() - 2, key = op.getNumLoops() - 1;
  if (!a || !b)
    return failure();
  arith::CmpIPredicate pred = cmp.getPredicate();
  if (*a == query && *b == key)
    pred = swapOperands(pred);
  else if (!(*a == key && *b == query))
    return refuse("the index mask does not compare the query and key "
                  "indices");
  if (!(std::isinf(*fillValue) && *fillValue < 0))
    return refuse("the index mask fills with " + formatDouble(*fillValue) +
                  ", not -inf");
  // `pred` now relates (key, query); the filled region must be key > query.
  using P = arith::CmpIPredicate;
  bool causal = fillWhenTrue ? (pred == P::ugt || pred == P::sgt)
                             : (pred == P::ule || pred == P::sle);
  if (!causal)
    return refuse("the index mask removes other scores than those of keys "
                  "after the query (j > i)");
  step.kind = Step::Causal;
  return step;
}

/// Peels scales (into `scale`, when given) and a transpose that cancels a
/// pending one off an operand of a contraction.
ChainOperand peelOperand(ChainOperand operand, double *scale) {
  while (true) {
    auto op = operand.value.getDefiningOp<linalg::LinalgOp>();
    if (!op)
      return operand;
    if (auto transpose = dyn_cast<linalg::TransposeOp>(op.getOperation())) {
      ArrayRef<int64_t> perm = transpose.getPermutation();
      int64_t rank = perm.size();
      bool swapsLastTwo =
          rank >= 2 && perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2;
      for (int64_t i = 0; i + 2 < rank; ++i)
        swapsLastTwo &= perm[i] == i;
      if (!operand.transposed || !swapsLastTwo)
        return operand;
      operand.value = transpose.getInput();
      operand.transposed = false;
      continue;
    }
    std::string why;
    FailureOr<Step> step = scale && op.getNumDpsInputs() == 1
                               ? classifyStep(op, why)
                               : FailureOr<Step>(failure());
    if (failed(step) || step->kind != Step::Scale)
      return operand;
    *scale *= step->factor;
    operand.value = op.getDpsInputs()[step->scoresInput];
  }
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

struct SoftmaxMatch {
  Value input;
  /// The ops computing the softmax, producers first.
  SmallVector<Operation *> ops;
};

/// The elementwise generic of a spelled-out softmax that divides the
/// exponentials by their sum.
bool isSoftmaxDivide(Value v) {
  auto op = v.getDefiningOp<linalg::GenericOp>();
  if (!op || !isElementwise(op) || op.getNumDpsInputs() != 2)
    return false;
  auto div = yieldedBy<arith::DivFOp>(op);
  if (!div || identityInput(op, div.getLhs()) < 0)
    return false;
  auto exp = op.getDpsInputs()[identityInput(op, div.getLhs())]
                 .getDefiningOp<linalg::GenericOp>();
  return exp && yieldedBy<math::ExpOp>(exp);
}

bool looksLikeSoftmax(Value v) {
  return v.getDefiningOp<linalg::SoftmaxOp>() || isSoftmaxDivide(v);
}

/// A reduction generic `out[... without d ...] = combine(in, out)` over the
/// whole of `input`; returns the reduced loop.
template <typename CombineOp>
std::optional<unsigned> matchReduction(Value result, Value input) {
  auto op = result.getDefiningOp<linalg::GenericOp>();
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1 ||
      op.getDpsInputs()[0] != input ||
      !op.getIndexingMapsArray()[0].isIdentity())
    return std::nullopt;
  std::optional<unsigned> d = droppedDim(op.getIndexingMapsArray()[1]);
  if (!d || op.getIteratorTypesArray()[*d] != utils::IteratorType::reduction)
    return std::nullopt;
  auto combine = yieldedBy<CombineOp>(op);
  if (!combine)
    return std::nullopt;
  bool inThenOut = inputIndexOf(op, combine.getLhs()) == 0 &&
                   isInitArg(op, combine.getRhs());
  bool outThenIn = inputIndexOf(op, combine.getRhs()) == 0 &&
                   isInitArg(op, combine.getLhs());
  if (!inThenOut && !outThenIn)
    return std::nullopt;
  return d;
}

FailureOr<SoftmaxMatch> matchSoftmax(Value p, std::string &why) {
  auto softmaxOverWrongDim = [&](int64_t dim, int64_t rank) {
    why = ("the softmax is over dim " + Twine(dim) + ", not the key dim " +
           Twine(rank - 1))
              .str();
    return failure();
  };
  if (auto op = p.getDefiningOp<linalg::SoftmaxOp>()) {
    int64_t rank = op.getInputOperandRank();
    if (int64_t(op.getDimension()) != rank - 1)
      return softmaxOverWrongDim(op.getDimension(), rank);
    return SoftmaxMatch{op.getInput(), {op}};
  }

  // divide(e, sum(e)) with e = exp(x - max(x)). The max is only there for
  // stability: whatever it starts from, the quotient is the softmax of x.
  auto unknown = [&](StringRef part) {
    why = ("the softmax is spelled out in a way the fusion does not follow (" +
           part + ")")
              .str();
    return failure();
  };
  auto div = p.getDefiningOp<linalg::GenericOp>();
  auto quotient = yieldedBy<arith::DivFOp>(div);
  if (!quotient)
    return unknown("the division");
  int e = identityInput(div, quotient.getLhs());
  int s = inputIndexOf(div, quotient.getRhs());
  if (e < 0 || s < 0 || s == e)
    return unknown("the division");
  Value exps = div.getDpsInputs()[e], sum = div.getDpsInputs()[s];
  std::optional<unsigned> dim = droppedDim(div.getIndexingMapsArray()[s]);
  if (!dim)
    return unknown("the sum is not broadcast along one dim");
  std::optional<unsigned> sumDim = matchReduction<arith::AddFOp>(sum, exps);
  if (sumDim != dim)
    return unknown("the divisor is not the sum of the exponentials");
  if (!isZeroInit(sum.getDefiningOp<linalg::GenericOp>().getDpsInits()[0]))
    return unknown("the sum does not start from zero");

  auto expOp = exps.getDefiningOp<linalg::GenericOp>();
  if (!expOp || !isElementwise(expOp) || expOp.getNumDpsInputs() != 2)
    return unknown("the exponentials");
  auto exp = yieldedBy<math::ExpOp>(expOp);
  auto sub = exp ? exp.getOperand().getDefiningOp<arith::SubFOp>() : nullptr;
  int x = sub ? identityInput(expOp, sub.getLhs()) : -1;
  int m = sub ? inputIndexOf(expOp, sub.getRhs()) : -1;
  if (x < 0 || m < 0 || m == x ||
      droppedDim(expOp.getIndexingMapsArray()[m]) != dim)
    return unknown("the exponentials are not exp(x - max)");
  Value input = expOp.getDpsInputs()[x], max = expOp.getDpsInputs()[m];
  std::optional<unsigned> maxDim = matchReduction<arith::MaxNumFOp>(max, input);
  if (!maxDim)
    maxDim = matchReduction<arith::MaximumFOp>(max, input);
  if (maxDim != dim)
    return unknown("the subtracted value is not the row maximum");

  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  if (int64_t(*dim) != rank - 1)
    return softmaxOverWrongDim(*dim, rank);
  return SoftmaxMatch{input,
                      {max.getDefiningOp(), expOp, sum.getDefiningOp(), div}};
}
} // namespace

//===----------------------------------------------------------------------===//
// The chain
//===----------------------------------------------------------------------===//

ChainMatch mlir::tfm::matchLinalgAttention(linalg::LinalgOp root) {
  if (!looksLikeContraction(root))
    return ChainMatch::skip("not a contraction of two tensors");
  int softmaxInput = -1;
  for (int i = 0; i < 2; ++i)
    if (looksLikeSoftmax(root.getDpsInputs()[i]))
      softmaxInput = i;
  if (softmaxInput < 0)
    return ChainMatch::skip("no operand is a softmax");

  // From here on the op ends what looks like an attention chain, and every
  // refusal is reported.
  std::string why;
  FailureOr<Contraction> pv = matchContraction(root, "P·V contraction", why);
  if (failed(pv))
    return ChainMatch::refuse(why);
  if (unsigned(softmaxInput) != pv->rowInput)
    return ChainMatch::refuse("the softmax result is the right operand of "
                              "the P·V contraction");
  FailureOr<ChainOperand> probs =
      operandFrom(*pv, pv->rowInput, pv->row, pv->red);
  if (failed(probs) || probs->transposed)
    return ChainMatch::refuse("the P·V contraction contracts the softmax "
                              "result over its query dim, not its key dim");

  FailureOr<SoftmaxMatch> softmax = matchSoftmax(probs->value, why);
  if (failed(softmax))
    return ChainMatch::refuse(why);

  AttentionChain chain;
  chain.root = root;
  FailureOr<ChainOperand> value =
      operandFrom(*pv, pv->colInput(), pv->red, pv->col);
  if (failed(value))
    return ChainMatch::refuse("the P·V contraction reads V with its batch "
                              "dims reordered or broadcast");
  chain.value = peelOperand(*value, /*scale=*/nullptr);

  // Walk from the softmax input back to the scores, noting for each op what
  // to say when its result has another user. `downstreamScale` is the
  // product of the scales seen so far, which may not change a mask sitting
  // above them.
  SmallVector<std::pair<Operation *, StringRef>> roles;
  for (Operation *op : llvm::reverse(softmax->ops))
    roles.push_back({op, op == softmax->ops.back()
                             ? "the softmax result has another user"
                             : "a value inside the softmax has another user"});
  double downstreamScale = 1.0;
  bool sawScale = false;
  Value x = softmax->input;
  while (auto op = x.getDefiningOp<linalg::LinalgOp>()) {
    if (looksLikeContraction(op))
      break;
    FailureOr<Step> step = classifyStep(op, why);
    if (failed(step)) {
      if (!why.empty())
        return ChainMatch::refuse(why);
      break;
    }
    StringRef role = "the masked scores have another user";
    switch (step->kind) {
    case Step::Scale:
      downstreamScale *= step->factor;
      sawScale = true;
      role = "the scaled scores have another user";
      break;
    case Step::AdditiveMask:
      if (sawScale)
        return ChainMatch::refuse("the mask is added before the scale, which "
                                  "would scale the mask too");
      [[fallthrough]];
    case Step::BooleanMask:
      if (downstreamScale < 0)
        return ChainMatch::refuse(
            "the mask is scaled by a negative factor afterwards");
      if (chain.mask)
        return ChainMatch::refuse("the scores have more than one mask");
      chain.mask = step->mask;
      break;
    case Step::Causal:
      if (downstreamScale < 0)
        return ChainMatch::refuse(
            "the causal mask is scaled by a negative factor afterwards");
      chain.causal = true;
      break;
    }
    roles.push_back({op, role});
    x = op.getDpsInputs()[step->scoresInput];
  }

  auto scoresOp = x.getDefiningOp<linalg::LinalgOp>();
  if (!scoresOp || !looksLikeContraction(scoresOp))
    return ChainMatch::refuse("the softmax input is not computed from a Q·Kᵀ "
                              "contraction by scales and masks");
  FailureOr<Contraction> qk =
      matchContraction(scoresOp, "Q·Kᵀ contraction", why);
  if (failed(qk))
    return ChainMatch::refuse(why);
  roles.push_back({scoresOp, "the scores have another user"});

  // Everything from the scores to the softmax result dies with the root;
  // another user would keep the S×S scores alive, and the fusion would save
  // nothing. A tensor.dim only reads a shape, which the rewrite takes from
  // the op's init instead.
  llvm::SmallPtrSet<Operation *, 8> inChain = {root};
  for (auto &[op, role] : roles)
    inChain.insert(op);
  for (auto &[op, role] : roles)
    for (Operation *user : op->getUsers())
      if (!inChain.contains(user) && !isa<tensor::DimOp>(user))
        return ChainMatch::refuse(role);

  FailureOr<ChainOperand> query =
      operandFrom(*qk, qk->rowInput, qk->row, qk->red);
  FailureOr<ChainOperand> key =
      operandFrom(*qk, qk->colInput(), qk->col, qk->red);
  if (failed(query) || failed(key))
    return ChainMatch::refuse("the Q·Kᵀ contraction reads Q or K with its "
                              "batch dims reordered or broadcast");
  double scale = downstreamScale;
  chain.query = peelOperand(*query, &scale);
  chain.key = peelOperand(*key, &scale);
  chain.scale = scale;
  for (auto &[op, role] : llvm::reverse(roles))
    chain.ops.push_back(op);
  if (std::optional<std::string> reason = checkChainOperands(chain))
    return ChainMatch::refuse(*reason);
  return ChainMatch::fuse(std::move(chain));
}
