//===- AttentionChain.h - An attention chain found by tfm-fuse-attention --===//
//
// What the matcher of tfm-fuse-attention (FuseAttentionLinalg.cpp) finds: the
// operands of the one tfm.attention a chain becomes, or the reason the chain
// cannot become one. The matcher only reads IR; the rewrite in
// FuseAttention.cpp builds the op, so refusals can be reported without
// rewriting anything.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_TRANSFORMS_ATTENTIONCHAIN_H
#define TFM_COMPILER_TRANSFORMS_ATTENTIONCHAIN_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <string>

namespace mlir::linalg {
class LinalgOp;
} // namespace mlir::linalg

namespace mlir::tfm {

/// An operand of the fused op as found in the chain. `transposed` means the
/// value holds the operand with its last two dims swapped (K stored as Kᵀ, a
/// contraction reading its operand transposed); the rewrite then adds a
/// transpose, O(S·D) work next to the O(S²·D) the fusion saves.
struct ChainOperand {
  Value value;
  bool transposed = false;
};

/// `root = softmax(scale * Q Kᵀ + mask) V`, recognized.
struct AttentionChain {
  /// The P·V contraction; the fused op replaces its result.
  Operation *root = nullptr;
  ChainOperand query, key, value;
  /// A float mask added to the scaled scores or an i1 mask (true = masked
  /// out); null when there is none.
  Value mask;
  double scale = 1.0;
  bool causal = false;
  /// Ops from the scores to the softmax result, producers first; they die
  /// with the root, which the matcher has checked.
  SmallVector<Operation *> ops;
};

/// The outcome of matching at one candidate root.
struct ChainMatch {
  /// Whether the root looks like the end of an attention chain (a
  /// contraction of a softmax result). Refusals of candidates are reported
  /// as remarks; other ops are merely skipped.
  bool candidate = false;
  /// Why the root was skipped or refused.
  std::string reason;
  std::optional<AttentionChain> chain;

  static ChainMatch skip(const Twine &why) { return {false, why.str(), {}}; }
  static ChainMatch refuse(const Twine &why) { return {true, why.str(), {}}; }
  static ChainMatch fuse(AttentionChain chain) {
    return {true, "", std::move(chain)};
  }
};

/// Matches a contraction of a softmax over linalg ops (named, generic, or the
/// softmax as tfm-decompose-softmax spells it out).
ChainMatch matchLinalgAttention(linalg::LinalgOp root);

/// Checks what the fused op requires of its operands (ranks, batch dims,
/// element types) and returns why they fail, or nullopt.
std::optional<std::string> checkChainOperands(const AttentionChain &chain);

/// Replaces `chain.root` with one tfm.attention on a `tensor.empty` init and
/// erases the rest of the chain.
void rewriteAttentionChain(RewriterBase &rewriter, const AttentionChain &chain);

} // namespace mlir::tfm

#endif // TFM_COMPILER_TRANSFORMS_ATTENTIONCHAIN_H
