//===- PackEmbedding.cpp - The embedding's gather reads packed tables -----===//
//
// A token embedding's table is stored once, and as compactly as the GEMM
// stores weights: when it is also an LM head's weight (tied), the gather
// reads the head's packed panels (f32, or the file's blocks); any other
// table of GGUF blocks takes the same block encoding in panels of one row.
// The gather dequantizes only the rows it reads (BlockGather.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/PackedWeights.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::packing;

namespace {
/// `embedding 'name' [num, dim] gathers rows of TYPE`, which a remark
/// goes on to say the whereabouts and size of.
InFlightDiagnostic embeddingRemark(EmbeddingOp op, const ConstantView &table,
                                   StringRef type) {
  InFlightDiagnostic remark = op.emitRemark();
  remark << "embedding"
         << (table.name ? " '" + table.name.str() + "'" : std::string()) << " ["
         << table.shape[0] << ", " << table.shape[1] << "] gathers rows of "
         << type;
  return remark;
}

std::string bytesPerWeight(double bytes) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.4g", bytes);
  return text;
}
} // namespace

void PackedTables::record(const ConstantView &weight, bool kMajor,
                          PackedType type, BlockConstants packed) {
  if (kMajor || !weight.isWhole())
    return;
  if (type == PackedType::F32 && !weight.splat && !weight.raw.empty())
    byData[weight.raw.data()] = {weight.shape, packed, nullptr};
  else if (type == PackedType::Blocks && !weight.blocks.empty())
    byData[weight.blocks.data()] = {weight.shape, packed, weight.blockType};
}

/// Points every `tfm.embedding` over a recorded table at its packed
/// panels; see the declaration.
void PackedTables::redirectEmbeddings(func::FuncOp func, bool remarks) {
  if (byData.empty())
    return;
  Block &entry = func.getBody().front();
  func.walk([&](EmbeddingOp op) {
    if (op.getPackedRows())
      return;
    std::optional<ConstantView> table = getConstantView(op.getWeight());
    if (!table || !table->isWhole())
      return;
    auto it = byData.end();
    if (!table->splat && !table->raw.empty())
      it = byData.find(table->raw.data());
    if (it == byData.end() && !table->blocks.empty())
      it = byData.find(table->blocks.data());
    if (it == byData.end() || it->second.shape != table->shape)
      return;
    // The LM head comes after the embedding: its constants move up to
    // where both see them.
    const BlockConstants &packed = it->second.packed;
    SmallVector<Operation *> constants;
    for (Value v :
         {packed.values, packed.scales, packed.offsets, packed.superScales})
      if (v)
        constants.push_back(v.getDefiningOp());
    if (llvm::any_of(constants,
                     [&](Operation *c) { return c->getBlock() != &entry; }))
      return;
    for (Operation *c : llvm::reverse(constants))
      c->moveBefore(&entry, entry.begin());
    Operation *oldTable = op.getWeight().getDefiningOp();
    op.getWeightMutable().assign(packed.values);
    if (packed.scales)
      op.getScalesMutable().assign(packed.scales);
    if (packed.offsets)
      op.getOffsetsMutable().assign(packed.offsets);
    if (packed.superScales)
      op.getSuperScalesMutable().assign(packed.superScales);
    op.setPackedRows(table->shape[0]);
    if (remarks) {
      const GgufBlockInfo *info = it->second.blockType;
      embeddingRemark(op, *table, info ? info->name : "f32")
          << " from the tied LM head's panels (stored once: "
          << (info ? bytesPerWeight(packedBytesPerWeight(*info)) +
                         " bytes per weight, the file's " +
                         bytesPerWeight(fileBytesPerWeight(*info))
                   : std::string("4 bytes per weight"))
          << ")";
    }
    if (oldTable && oldTable->use_empty() && isPure(oldTable))
      oldTable->erase();
  });
}

/// Points every `tfm.embedding` over a whole table of GGUF blocks at the
/// blocks kept quantized, in the encoding of the GEMM's panels with one
/// row a panel (compact, a row's values contiguous), which the gather
/// dequantizes row by row; the f32 table then has no user left. Fails on
/// blocks that do not decode.
LogicalResult mlir::tfm::packing::quantizeEmbeddings(func::FuncOp func,
                                                     bool remarks) {
  SmallVector<EmbeddingOp> ops;
  func.walk([&](EmbeddingOp op) {
    if (!op.getPackedRows() && !op.getScales())
      ops.push_back(op);
  });
  for (EmbeddingOp op : ops) {
    std::optional<ConstantView> table = getConstantView(op.getWeight());
    if (!table || table->shape.size() != 2)
      continue;
    GemmWeight gemm{*table, /*kMajor=*/false};
    if (!hasUsableBlocks(gemm))
      continue;
    const GgufBlockInfo &info = *table->blockType;
    int64_t num = gemm.n(), dim = gemm.k();
    std::string error;
    std::optional<DecodedBlocks> decoded =
        decodeGgufBlocks(info, table->blocks, num, dim, error);
    if (!decoded)
      return op.emitError()
             << "weight" << (table->name ? " '" + table->name.str() + "'" : "")
             << ": " << error;
    PackedWeight packed =
        packBlocks(gemm, *decoded, /*width=*/1, op.getContext());
    OpBuilder b(op);
    BlockConstants constants =
        createBlockConstants(b, op.getLoc(), gemm, packed, /*columns=*/num);
    if (remarks)
      embeddingRemark(op, *table, info.name)
          << " (the file's blocks, a row a panel: "
          << bytesPerWeight(packedBytesPerWeight(info))
          << " bytes per weight, the file's "
          << bytesPerWeight(fileBytesPerWeight(info)) << ")";
    Operation *oldTable = op.getWeight().getDefiningOp();
    op.getWeightMutable().assign(constants.values);
    op.getScalesMutable().assign(constants.scales);
    if (constants.offsets)
      op.getOffsetsMutable().assign(constants.offsets);
    if (constants.superScales)
      op.getSuperScalesMutable().assign(constants.superScales);
    op.setPackedRows(num);
    if (oldTable && oldTable->use_empty() && isPure(oldTable))
      oldTable->erase();
  }
  return success();
}
