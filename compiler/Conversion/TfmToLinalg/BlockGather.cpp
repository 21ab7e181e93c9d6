//===- BlockGather.cpp - One weight of a quantized embedding row ----------===//
//
// A quantized token embedding keeps its table in the block panels of a
// block-quantized tfm.packed_linear weight (the LM head's own, when the head
// is tied to it), so the gather decodes one weight from that encoding:
// table row r is the weight's column r, in panel r / w at lane r % w, and
// its k-th value is an int8 byte, or a nibble plus bit planes, of the
// packed row that holds k (TfmKernelOps.td). The scale (and offset) of its
// block is an f16, or a K-quant's integer times its super-block's f16; both
// are exact in f32, so the value is the one the file's reference
// dequantization computes, `scale * q (+ offset)`.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/TfmToLinalg/BlockGather.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// An f16 or i8 scale as `f32`, exactly.
Value widen(OpBuilder &b, Location l, Type f32, Value scale) {
  if (isa<FloatType>(scale.getType()))
    return arith::ExtFOp::create(b, l, f32, scale);
  return arith::SIToFPOp::create(b, l, f32, scale);
}
} // namespace

Value mlir::tfm::dequantizeBlockElement(OpBuilder &b, Location l,
                                        EmbeddingOp op, Value row,
                                        Value column) {
  auto panelsType = cast<RankedTensorType>(op.getWeight().getType());
  auto scalesType = cast<RankedTensorType>(op.getScales().getType());
  Type f32 = op.getResult().getType().getElementType();
  int64_t dim = op.getResult().getType().getShape().back();
  int64_t width = panelsType.getDimSize(2) / 4,
          depth = panelsType.getDimSize(1);
  int64_t block = dim / scalesType.getDimSize(0);
  bool nibbles = depth == dim / 8;
  int highBits = depth == dim / 32 * 5 ? 1 : depth == dim / 32 * 6 ? 2 : 0;
  bool offsets = bool(op.getOffsets());
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, l, v);
  };
  auto div = [&](Value v, int64_t d) -> Value {
    return arith::DivUIOp::create(b, l, v, index(d));
  };
  auto rem = [&](Value v, int64_t d) -> Value {
    return arith::RemUIOp::create(b, l, v, index(d));
  };
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, l, x, y);
  };
  auto mul = [&](Value v, int64_t m) -> Value {
    return arith::MulIOp::create(b, l, v, index(m));
  };
  Value panel = div(row, width);
  Value lane = mul(rem(row, width), 4);
  Type i32 = b.getI32Type();
  auto byteAt = [&](Value packedRow, Value byte) -> Value {
    Value v = tensor::ExtractOp::create(
        b, l, op.getWeight(), ValueRange{panel, packedRow, add(lane, byte)});
    return arith::ExtUIOp::create(b, l, i32, v);
  };
  auto constI32 = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, l, b.getI32IntegerAttr(int32_t(v)));
  };
  Value q;
  if (!nibbles && !highBits) {
    // int8 values, four consecutive k per 32-bit lane.
    Value v = tensor::ExtractOp::create(
        b, l, op.getWeight(),
        ValueRange{panel, div(column, 4), add(lane, rem(column, 4))});
    q = arith::ExtSIOp::create(b, l, i32, v);
  } else {
    // Per 32 k: 4 rows of nibbles (byte b of row r: k = 8r + b low, 8r + 4
    // + b high), then a row per high bit whose byte b holds, in bit 2r + h,
    // that bit of the value in nibble h of row r's byte b.
    int64_t rowsPer32 = 4 + highBits;
    Value within = rem(column, 32);
    Value first = mul(div(column, 32), rowsPer32);
    Value nibbleRow = div(within, 8), byte = rem(within, 4);
    Value high = arith::IndexCastOp::create(b, l, i32, rem(div(within, 4), 2));
    Value shift = arith::MulIOp::create(b, l, high, constI32(4));
    Value u = arith::AndIOp::create(
        b, l,
        arith::ShRUIOp::create(b, l, byteAt(add(first, nibbleRow), byte),
                               shift),
        constI32(0x0F));
    Value bit = arith::AddIOp::create(
        b, l,
        arith::MulIOp::create(b, l,
                              arith::IndexCastOp::create(b, l, i32, nibbleRow),
                              constI32(2)),
        high);
    for (int plane = 0; plane < highBits; ++plane) {
      Value bits = byteAt(add(first, index(4 + plane)), byte);
      Value one = arith::AndIOp::create(
          b, l, arith::ShRUIOp::create(b, l, bits, bit), constI32(1));
      u = arith::OrIOp::create(
          b, l, u, arith::ShLIOp::create(b, l, one, constI32(4 + plane)));
    }
    // Symmetric types centre their unsigned values: Q4_0's u - 8, Q5_0's
    // u - 16, Q6_K's u - 32.
    q = offsets ? u
                : arith::SubIOp::create(b, l, u, constI32(8 << highBits))
                      .getResult();
  }
  Value blockIndex = div(column, block);
  auto blockTerm = [&](Value terms, int64_t super) -> Value {
    Value term = widen(
        b, l, f32,
        tensor::ExtractOp::create(b, l, terms, ValueRange{blockIndex, row}));
    if (Value supers = op.getSuperScales()) {
      int64_t superBlock =
          dim / cast<RankedTensorType>(supers.getType()).getDimSize(1);
      Value s = tensor::ExtractOp::create(
          b, l, supers, ValueRange{index(super), div(column, superBlock), row});
      term = arith::MulFOp::create(b, l, widen(b, l, f32, s), term);
    }
    return term;
  };
  Value element =
      arith::MulFOp::create(b, l, arith::SIToFPOp::create(b, l, f32, q),
                            blockTerm(op.getScales(), 0));
  if (offsets)
    element =
        arith::AddFOp::create(b, l, element, blockTerm(op.getOffsets(), 1));
  return element;
}
