//===- FuseAttentionTfm.cpp - Attention chains over tfm primitives --------===//
//
// Recognizes `matmul(softmax(mask(scale(matmul(Q, transpose(K))))), V)` as
// users write it and as tfm-decompose-layers spells sdpa and
// multi_head_attention, walking back from the P·V matmul.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/AttentionChain.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

namespace {
bool swapsLastTwoDims(TransposeOp op) {
  auto [d0, d1] = op.getNormalizedDims();
  int64_t rank = op.getInput().getType().getRank();
  return std::min(d0, d1) == rank - 2 && std::max(d0, d1) == rank - 1;
}

/// Peels what can move into the fused op off a Q or K operand: scales
/// (uniform, so they commute with the contraction into `scale`) and a
/// transpose that cancels a pending one. Other users of the peeled ops do
/// not matter: they are O(S·D), never the scores.
ChainOperand peelOperand(ChainOperand operand, double &scale) {
  while (true) {
    if (auto op = operand.value.getDefiningOp<ScaleOp>()) {
      double factor = op.getFactor().convertToDouble();
      scale = op.getDivide() ? scale / factor : scale * factor;
      operand.value = op.getInput();
      continue;
    }
    auto transpose = operand.value.getDefiningOp<TransposeOp>();
    if (operand.transposed && transpose && swapsLastTwoDims(transpose)) {
      operand.value = transpose.getInput();
      operand.transposed = false;
      continue;
    }
    return operand;
  }
}

/// Whether `v` is computed from a matmul through ops that may stand between
/// the scores and the softmax; tells the scores from the mask in an add.
bool reachesScores(Value v, int depth = 8) {
  Operation *def = v.getDefiningOp();
  if (!def || depth == 0)
    return false;
  if (isa<MatmulOp>(def))
    return true;
  if (isa<ScaleOp, CausalMaskOp, MaskedFillOp>(def))
    return reachesScores(def->getOperand(0), depth - 1);
  if (auto add = dyn_cast<AddOp>(def))
    return reachesScores(add.getLhs(), depth - 1) ||
           reachesScores(add.getRhs(), depth - 1);
  return false;
}

std::string formatDouble(double value) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%g", value);
  return s;
}
} // namespace

ChainMatch mlir::tfm::matchTfmAttention(MatmulOp root) {
  auto softmax = root.getLhs().getDefiningOp<SoftmaxOp>();
  if (!softmax) {
    if (root.getRhs().getDefiningOp<SoftmaxOp>())
      return ChainMatch::refuse(
          "the softmax result is the right operand of the matmul, which "
          "contracts it over its query dim, not its key dim");
    return ChainMatch::skip("the left operand is not a softmax");
  }
  int64_t rank = softmax.getInput().getType().getRank();
  if (softmax.getNormalizedDim() != rank - 1)
    return ChainMatch::refuse("the softmax is over dim " +
                              Twine(softmax.getNormalizedDim()) +
                              ", not the key dim " + Twine(rank - 1));
  if (!softmax->hasOneUse())
    return ChainMatch::refuse("the softmax result has another user");

  AttentionChain chain;
  chain.root = root;
  SmallVector<Operation *> ops = {softmax};
  // The product of the scales between the current op and the softmax: a
  // mask may sit below a scale only when that cannot change the mask.
  double downstreamScale = 1.0;
  bool sawScale = false;
  Value x = softmax.getInput();
  while (Operation *def = x.getDefiningOp()) {
    StringRef role = "masked scores";
    Value next;
    if (auto scale = dyn_cast<ScaleOp>(def)) {
      double factor = scale.getFactor().convertToDouble();
      downstreamScale = scale.getDivide() ? downstreamScale / factor
                                          : downstreamScale * factor;
      sawScale = true;
      role = "scaled scores";
      next = scale.getInput();
    } else if (auto causal = dyn_cast<CausalMaskOp>(def)) {
      if (downstreamScale < 0)
        return ChainMatch::refuse(
            "the causal mask is scaled by a negative factor afterwards");
      chain.causal = true;
      next = causal.getInput();
    } else if (auto fill = dyn_cast<MaskedFillOp>(def)) {
      double value = fill.getValue().convertToDouble();
      if (!(std::isinf(value) && value < 0))
        return ChainMatch::refuse("masked_fill fills with " +
                                  formatDouble(value) +
                                  ", not -inf: only -inf masks remove scores");
      if (downstreamScale < 0)
        return ChainMatch::refuse(
            "the boolean mask is scaled by a negative factor afterwards");
      if (chain.mask)
        return ChainMatch::refuse("the scores have more than one mask");
      chain.mask = fill.getMask();
      next = fill.getInput();
    } else if (auto add = dyn_cast<AddOp>(def)) {
      Value scores = add.getLhs(), mask = add.getRhs();
      if (!reachesScores(scores))
        std::swap(scores, mask);
      if (!reachesScores(scores))
        return ChainMatch::refuse(
            "the softmax input is a sum of which neither side is computed "
            "from a Q·Kᵀ matmul");
      if (sawScale)
        return ChainMatch::refuse("the mask is added before the scale, which "
                                  "would scale the mask too");
      if (chain.mask)
        return ChainMatch::refuse("the scores have more than one mask");
      if (add.getType() != scores.getType())
        return ChainMatch::refuse(
            "the mask broadcasts the scores to a larger shape");
      chain.mask = mask;
      next = scores;
    } else {
      break;
    }
    if (!def->hasOneUse())
      return ChainMatch::refuse("the " + role + " have another user");
    ops.push_back(def);
    x = next;
  }

  auto scores = x.getDefiningOp<MatmulOp>();
  if (!scores)
    return ChainMatch::refuse("the softmax input is not computed from a Q·Kᵀ "
                              "matmul by scales and masks");
  if (!scores->hasOneUse())
    return ChainMatch::refuse("the scores have another user");
  ops.push_back(scores);

  double scale = downstreamScale;
  chain.query = peelOperand({scores.getLhs(), false}, scale);
  // The right operand is Kᵀ: K itself, or a transpose of it.
  chain.key = peelOperand({scores.getRhs(), true}, scale);
  chain.value = {root.getRhs(), false};
  chain.scale = scale;
  chain.ops.assign(ops.rbegin(), ops.rend());
  if (std::optional<std::string> why = checkChainOperands(chain))
    return ChainMatch::refuse(*why);
  return ChainMatch::fuse(std::move(chain));
}
