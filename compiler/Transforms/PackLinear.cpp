//===- PackLinear.cpp - Pack linear weights for the GEMM micro-kernel -----===//
//
// A linear layer's weight is a compile-time constant, so it is packed here,
// once, into the panel layout the register-tiled micro-kernel streams
// (`[ceil(N/nr), K, nr]`), instead of being repacked at every run as a BLAS
// call must. The activation and residual add that follow the layer become the
// micro-kernel's epilogue, applied while the output tile is in registers.
// `x @ W` with a constant `W [K, N]` (GPT-2's Conv1D) is the same GEMM with
// the weight stored the other way round, and takes the same road.
//
// A weight that tfm-bind-weights bound from a GGUF file's blocks (which it
// leaves on the constant as `tfm.q8_0_blocks`, `tfm.q4_k_blocks`, ...: the
// types of GgufBlocks.h) is repacked from those blocks, bit for bit: its
// integer values into the i8 panels (4-bit ones two per byte, 5- and
// 6-bit ones as nibbles plus a bit plane per high bit) and its
// scales (and the asymmetric types' minimums) as the file keeps them, per
// block of 32 k (16 for Q6_K) and column: an f16, or a K-quant's integer
// sub-block scale beside its super-block's f16.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/ConstantData.h"
#include "compiler/Transforms/GgufBlocks.h"
#include "compiler/Transforms/MappedWeights.h"
#include "compiler/Transforms/PackedWeights.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/GlobPattern.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMPACKLINEAR
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::packing;

/// `loc` under the name of `view`'s weight with `suffix`, which names the
/// derived constant in a sidecar of external weights.
Location mlir::tfm::packing::derivedLoc(Location loc, const ConstantView &view,
                                        StringRef suffix) {
  if (!view.name)
    return loc;
  return NameLoc::get(
      StringAttr::get(loc.getContext(), view.name.getValue() + suffix), loc);
}

std::optional<ConstantView> mlir::tfm::packing::getConstantView(Value value) {
  if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (!slice.hasUnitStride() || !slice.getSourceType().hasStaticShape() ||
        !slice.getType().hasStaticShape() ||
        slice.getSourceType().getRank() != slice.getType().getRank())
      return std::nullopt;
    std::optional<ConstantView> source = getConstantView(slice.getSource());
    if (!source)
      return std::nullopt;
    for (auto [i, offset] : llvm::enumerate(slice.getStaticOffsets())) {
      if (ShapedType::isDynamic(offset))
        return std::nullopt;
      source->offsets[i] += offset;
    }
    source->shape = llvm::to_vector(slice.getType().getShape());
    return source;
  }
  ElementsAttr data;
  if (!matchPattern(value, m_Constant(&data)) || !data.getElementType().isF32())
    return std::nullopt;
  ConstantView view;
  view.full = llvm::to_vector(data.getShapedType().getShape());
  view.shape = view.full;
  view.offsets.assign(view.shape.size(), 0);
  if (auto dense = dyn_cast<DenseElementsAttr>(data); dense && dense.isSplat())
    view.splat = dense.getSplatValue<float>();
  value.getDefiningOp()->getLoc()->walk([&](Location l) {
    if (auto named = dyn_cast<NameLoc>(l)) {
      view.name = named.getName();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  Operation *constant = value.getDefiningOp();
  for (const GgufBlockInfo &info : ggufBlockTypes())
    if (std::optional<ArrayRef<char>> blocks =
            getRawConstantData(constant->getAttr(info.attribute))) {
      view.blocks = *blocks;
      view.blockType = &info;
      break;
    }
  if (!view.splat) {
    std::optional<ArrayRef<char>> raw = getRawConstantData(data);
    if (!raw || int64_t(raw->size()) != data.getNumElements() * 4)
      return std::nullopt;
    view.raw = ArrayRef<float>(reinterpret_cast<const float *>(raw->data()),
                               data.getNumElements());
  }
  return view;
}

namespace {

/// The activation of a single-use tfm.relu / tfm.gelu user, if any.
std::optional<Activation> activationOf(Operation *user) {
  if (isa<ReluOp>(user))
    return Activation::relu;
  if (auto gelu = dyn_cast<GeluOp>(user))
    return gelu.getApproximate() == GeluApproximation::tanh
               ? Activation::gelu_tanh
               : Activation::gelu;
  return std::nullopt;
}

/// Element `col` of a bias whose every dim but the last is 1.
float biasAt(const ConstantView &bias, int64_t col) {
  SmallVector<int64_t> index(bias.shape.size(), 0);
  index.back() = col;
  return bias.at(index);
}

/// A constant `[N]` (or `[1, ..., 1, N]`) view that `add` adds to `value`,
/// when `add` keeps `value`'s type: the bias of `x @ W + b`.
std::optional<ConstantView> getAddedBias(Value value, Operation *user,
                                         int64_t n) {
  auto add = dyn_cast<AddOp>(user);
  if (!add || add.getType() != value.getType() || add.getLhs() == add.getRhs())
    return std::nullopt;
  Value other = add.getLhs() == value ? add.getRhs() : add.getLhs();
  std::optional<ConstantView> bias = getConstantView(other);
  if (!bias || bias->shape.empty() || bias->shape.back() != n ||
      llvm::any_of(ArrayRef(bias->shape).drop_back(),
                   [](int64_t d) { return d != 1; }))
    return std::nullopt;
  return bias;
}

/// `value` rounded to bf16 as vdpbf16ps reads its operands and
/// vcvtneps2bf16 rounds: to nearest even, NaN kept (quiet), denormals to
/// signed zeros.
uint16_t roundToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if (std::isnan(value))
    return uint16_t((bits >> 16) | 0x40);
  if ((bits & 0x7f800000u) == 0)
    return uint16_t((bits >> 16) & 0x8000);
  bits += 0x7fffu + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

} // namespace

/// Whether `weight` can be packed from its blocks: the whole constant,
/// stored [N, K] (blocks run along K), K whole blocks, the bytes whole.
bool mlir::tfm::packing::hasUsableBlocks(const GemmWeight &weight) {
  const ConstantView &view = weight.view;
  const GgufBlockInfo *info = view.blockType;
  return info && !view.blocks.empty() && !weight.kMajor && view.isWhole() &&
         view.shape.size() == 2 && weight.k() % info->superBlock == 0 &&
         int64_t(view.blocks.size()) ==
             weight.n() * (weight.k() / info->superBlock) * info->bytes;
}

/// Packs a weight decoded from GGUF blocks (GgufBlocks.h). s8 values go
/// into the i8 panels `[panels, K / 4, width * 4]` as they are. 4-bit ones
/// take two per byte: a 32-bit lane holds 8 k of a column, `[panels, K / 8,
/// width * 4]`, its byte b the nibbles of k = 8 r + b (low) and 8 r + 4 + b
/// (high), so that the low nibbles of a lane are one quad of consecutive k
/// and the high ones the next. Each block's scale (and offset) at
/// `[k / block, n]` (`[K / block, panels * width]`), as the file keeps it:
/// f16, or a K-quant's integer beside its super-block's f16 d (and -dmin)
/// at `[0 (1), k / 256, n]`. Past N: zero scales and offsets (and Q4_0's
/// padding nibbles are 8: value 0).
PackedWeight mlir::tfm::packing::packBlocks(const GemmWeight &weight,
                                            const DecodedBlocks &decoded,
                                            int64_t width, MLIRContext *ctx) {
  const GgufBlockInfo &info = *weight.view.blockType;
  int64_t n = weight.n(), k = weight.k();
  int64_t panels = llvm::divideCeil(n, width);
  // Packed rows per 32 k: 8 of s8 quads, 4 of nibbles, plus a bit plane
  // per high bit.
  int64_t rowsPer32 = info.nibbles ? 4 : info.highBits ? 4 + info.highBits : 8;
  int64_t depth = k / 32 * rowsPer32, blocks = k / info.block;
  int64_t supers = k / info.superBlock, columns = panels * width;
  PackedWeight packed;
  packed.type = RankedTensorType::get({panels, depth, width * 4},
                                      IntegerType::get(ctx, 8));
  char padding = info.nibbles && !info.offsets ? char(0x88) : char(0);
  packed.data.assign(size_t(panels * depth * width * 4), padding);
  if (info.superScales()) {
    packed.smallScales.assign(size_t(blocks * columns), 0);
    packed.superScales.assign(size_t((info.offsets ? 2 : 1) * supers * columns),
                              0);
    if (info.offsets)
      packed.smallMins.assign(size_t(blocks * columns), 0);
  } else {
    packed.halfScales.assign(size_t(blocks * columns), 0);
    if (info.offsets)
      packed.halfOffsets.assign(size_t(blocks * columns), 0);
  }
  for (int64_t col = 0; col < n; ++col) {
    int64_t p = col / width, j = col % width;
    for (int64_t blk = 0; blk < blocks; ++blk) {
      size_t from = size_t(col * blocks + blk),
             to = size_t(blk * columns + col);
      if (info.superScales()) {
        packed.smallScales[to] = decoded.smallScales[from];
        if (info.offsets)
          packed.smallMins[to] = decoded.smallMins[from];
      } else {
        packed.halfScales[to] = decoded.halfScales[from];
        if (info.offsets)
          packed.halfOffsets[to] = decoded.halfOffsets[from];
      }
    }
    if (info.superScales())
      for (int64_t sb = 0; sb < supers; ++sb) {
        size_t from = size_t(col * supers + sb);
        packed.superScales[size_t(sb * columns + col)] =
            decoded.superScales[from];
        if (info.offsets)
          packed.superScales[size_t((supers + sb) * columns + col)] =
              decoded.superMins[from];
      }
    const int8_t *q = decoded.q.data() + col * k;
    auto at = [&](int64_t row, int64_t b) -> char & {
      return packed.data[size_t(((p * depth + row) * width + j) * 4 + b)];
    };
    if (!info.nibbles && !info.highBits) {
      for (int64_t c = 0; c < k; ++c)
        at(c / 4, c % 4) = char(q[c]);
      continue;
    }
    // 5- and 6-bit values as unsigned u (Q5_0 and Q6_K's q + 16, q + 32):
    // per 32 k, 4 rows of their low nibbles as Q4's, then a row per high
    // bit, each a 32-bit lane per column whose bit 8 b + t is that bit of
    // the value in byte b of nibble row t / 2 (its low nibble for even t,
    // high for odd): the kernel shifts a plane right by 2 (t / 2) and
    // left into place, masking one bit per byte.
    int shift = info.highBits && !info.offsets ? 8 << info.highBits : 0;
    auto u = [&](int64_t c) { return int(q[c]) + shift; };
    for (int64_t g = 0; g < k / 32; ++g)
      for (int64_t r = 0; r < 4; ++r)
        for (int64_t b = 0; b < 4; ++b) {
          int64_t low = 32 * g + 8 * r + b, high = low + 4;
          at(g * rowsPer32 + r, b) =
              char((u(low) & 0x0F) | (u(high) & 0x0F) << 4);
          for (int plane = 0; plane < info.highBits; ++plane)
            for (int half = 0; half < 2; ++half) {
              int bit = (u(half ? high : low) >> (4 + plane)) & 1;
              at(g * rowsPer32 + 4 + plane, b) |= char(bit << (2 * r + half));
            }
        }
  }
  return packed;
}

namespace {

PackedWeight packWeight(const GemmWeight &weight, PackedType packedType,
                        const DecodedBlocks *decoded, int64_t width,
                        MLIRContext *ctx) {
  if (packedType == PackedType::Blocks)
    return packBlocks(weight, *decoded, width, ctx);
  int64_t n = weight.n(), k = weight.k();
  int64_t panels = llvm::divideCeil(n, width);
  int64_t group = packedType == PackedType::F32    ? 1
                  : packedType == PackedType::BF16 ? 2
                                                   : 4;
  int64_t depth = llvm::divideCeil(k, group);
  Type element = packedType == PackedType::F32    ? Type(Float32Type::get(ctx))
                 : packedType == PackedType::BF16 ? Type(BFloat16Type::get(ctx))
                                                  : IntegerType::get(ctx, 8);
  PackedWeight packed;
  packed.type = RankedTensorType::get({panels, depth, width * group}, element);
  int64_t bytes = 4 / group;
  packed.data.assign(size_t(panels * depth * width * group * bytes), 0);
  if (packedType == PackedType::I8) {
    packed.scales.assign(size_t(panels * width), 1.0f);
    packed.sums.assign(size_t(panels * width), 0);
  }
  char *out = packed.data.data();
  for (int64_t col = 0; col < n; ++col) {
    int64_t p = col / width, j = col % width;
    float scale = 1.0f;
    if (packedType == PackedType::I8) {
      float largest = 0.0f;
      for (int64_t c = 0; c < k; ++c) {
        float magnitude = std::fabs(weight.at(col, c));
        // NaN is no magnitude: it quantizes to 0 below, not into the
        // column's scale.
        if (!std::isnan(magnitude))
          largest = std::max(largest, magnitude);
      }
      if (std::isinf(largest))
        largest = std::numeric_limits<float>::max();
      // An all-zero column keeps scale 1: its values quantize to 0.
      if (largest > 0.0f)
        scale = largest / 127.0f;
      packed.scales[size_t(col)] = scale;
    }
    for (int64_t c = 0; c < k; ++c) {
      int64_t index = ((p * depth + c / group) * width + j) * group + c % group;
      float value = weight.at(col, c);
      switch (packedType) {
      case PackedType::F32:
        std::memcpy(out + index * 4, &value, 4);
        break;
      case PackedType::BF16: {
        uint16_t rounded = roundToBF16(value);
        std::memcpy(out + index * 2, &rounded, 2);
        break;
      }
      case PackedType::Blocks:
        llvm_unreachable("packed from its blocks");
      case PackedType::I8: {
        float q = std::nearbyint(value / scale);
        auto quantized =
            std::isnan(q) ? int8_t(0) : int8_t(std::clamp(q, -127.0f, 127.0f));
        out[index] = char(quantized);
        packed.sums[size_t(col)] += quantized;
        break;
      }
      }
    }
  }
  return packed;
}

} // namespace

BlockConstants mlir::tfm::packing::createBlockConstants(
    OpBuilder &b, Location loc, const GemmWeight &weight,
    const PackedWeight &packed, int64_t columns) {
  const GgufBlockInfo &info = *weight.view.blockType;
  auto bytesOf = [](const auto &values) {
    return ArrayRef<char>(reinterpret_cast<const char *>(values.data()),
                          values.size() * sizeof(values[0]));
  };
  auto constant = [&](StringRef suffix, ArrayRef<int64_t> shape, Type element,
                      ArrayRef<char> bytes) -> Value {
    return arith::ConstantOp::create(
        b, derivedLoc(loc, weight.view, suffix),
        DenseElementsAttr::getFromRawBuffer(
            RankedTensorType::get(shape, element), bytes));
  };
  BlockConstants out;
  out.values = arith::ConstantOp::create(
      b, derivedLoc(loc, weight.view, ".packed"),
      DenseElementsAttr::getFromRawBuffer(packed.type, packed.data));
  SmallVector<int64_t> blocksShape = {weight.k() / info.block, columns};
  if (info.superScales()) {
    Type i8 = b.getI8Type();
    out.scales =
        constant(".scales", blocksShape, i8, bytesOf(packed.smallScales));
    if (info.offsets)
      out.offsets =
          constant(".offsets", blocksShape, i8, bytesOf(packed.smallMins));
    out.superScales =
        constant(".super_scales",
                 {info.offsets ? 2 : 1, weight.k() / info.superBlock, columns},
                 b.getF16Type(), bytesOf(packed.superScales));
  } else {
    Type f16 = b.getF16Type();
    out.scales =
        constant(".scales", blocksShape, f16, bytesOf(packed.halfScales));
    if (info.offsets)
      out.offsets =
          constant(".offsets", blocksShape, f16, bytesOf(packed.halfOffsets));
  }
  return out;
}

namespace {

/// Replaces the GEMM `op` (and the bias add, activation and residual add that
/// follow it, each taken only when it is the sole user of what precedes it)
/// with one `tfm.packed_linear` over the weight packed into panels, and
/// returns the packed weight's constants.
BlockConstants rewriteToPacked(Operation *op, Value input,
                               const GemmWeight &weight,
                               std::optional<ConstantView> bias, bool biasIsAdd,
                               int64_t panelWidth, PackedType packedType,
                               const DecodedBlocks *decoded,
                               PatternRewriter &rewriter) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t n = weight.n();
  int64_t panels = llvm::divideCeil(n, panelWidth);
  PackedWeight packed = packWeight(weight, packedType, decoded, panelWidth,
                                   rewriter.getContext());
  // The compiler is done with the unpacked weight's pages (for a blob over
  // the mapped checkpoint; other memory is left alone).
  releaseMappedWeightPages(
      ArrayRef<char>(reinterpret_cast<const char *>(weight.view.raw.data()),
                     weight.view.raw.size() * sizeof(float)));
  Location loc = op->getLoc();
  Type f32 = rewriter.getF32Type();

  Operation *last = op;
  if (biasIsAdd)
    last = *op->getUsers().begin();
  Activation activation = Activation::none;
  if (last->hasOneUse()) {
    Operation *user = *last->getUsers().begin();
    if (std::optional<Activation> a = activationOf(user)) {
      activation = *a;
      last = user;
    }
  }
  Value residual;
  if (last->hasOneUse()) {
    if (auto add = dyn_cast<AddOp>(*last->getUsers().begin())) {
      Value other =
          add.getLhs() == last->getResult(0) ? add.getRhs() : add.getLhs();
      if (other.getType() == resultType &&
          add.getResult().getType() == resultType &&
          add.getLhs() != add.getRhs()) {
        residual = other;
        last = add;
      }
    }
  }

  rewriter.setInsertionPoint(last);
  Value packedWeight, scales, sums, offsets, superScales;
  if (packedType == PackedType::Blocks) {
    BlockConstants blocks = createBlockConstants(rewriter, loc, weight, packed,
                                                 panels * panelWidth);
    packedWeight = blocks.values;
    scales = blocks.scales;
    offsets = blocks.offsets;
    superScales = blocks.superScales;
  } else {
    packedWeight = arith::ConstantOp::create(
        rewriter, derivedLoc(loc, weight.view, ".packed"),
        DenseElementsAttr::getFromRawBuffer(packed.type, packed.data));
  }
  if (packedType == PackedType::I8) {
    scales = arith::ConstantOp::create(
        rewriter, derivedLoc(loc, weight.view, ".scales"),
        DenseElementsAttr::get(
            RankedTensorType::get({panels * panelWidth}, f32),
            ArrayRef(packed.scales)));
    sums = arith::ConstantOp::create(
        rewriter, derivedLoc(loc, weight.view, ".sums"),
        DenseElementsAttr::get(
            RankedTensorType::get({panels * panelWidth}, rewriter.getI32Type()),
            ArrayRef(packed.sums)));
  }
  Value biasValue;
  if (bias) {
    SmallVector<float> padded(panels * panelWidth, 0.0f);
    for (int64_t col = 0; col < n; ++col)
      padded[col] = biasAt(*bias, col);
    biasValue = arith::ConstantOp::create(
        rewriter, derivedLoc(loc, *bias, ".padded"),
        DenseElementsAttr::get(
            RankedTensorType::get({panels * panelWidth}, f32),
            ArrayRef(padded)));
  }
  SmallVector<Value> dynamicDims;
  for (int64_t d = 0; d + 1 < resultType.getRank(); ++d)
    if (resultType.isDynamicDim(d))
      dynamicDims.push_back(tensor::DimOp::create(rewriter, loc, input, d));
  Value init = tensor::EmptyOp::create(rewriter, loc, resultType, dynamicDims);
  auto packedLinear = PackedLinearOp::create(
      rewriter, loc, TypeRange{resultType}, input, packedWeight, scales, sums,
      offsets, superScales, biasValue, residual, init, activation);
  // The GEMM, bias add and activation in between are dead now: the greedy
  // driver erases them.
  rewriter.replaceOp(last, packedLinear.getResults());
  return {packedWeight, scales, offsets, superScales};
}

/// Which element type each weight is packed in, and the remarks saying so.
struct PackingPolicy {
  PackedType type = PackedType::F32;
  SmallVector<llvm::GlobPattern> keepF32;
  bool remarks = false;

  /// A weight bound from GGUF blocks of a kept type stays in them,
  /// whatever `type` (unless kept in f32); every other weight is packed in
  /// `type`.
  PackedType typeFor(Operation *op, const GemmWeight &gemm) const {
    const ConstantView &weight = gemm.view;
    PackedType asked = hasUsableBlocks(gemm) ? PackedType::Blocks : type;
    PackedType chosen = asked;
    if (weight.name && llvm::any_of(keepF32, [&](const llvm::GlobPattern &p) {
          return p.match(weight.name.getValue());
        }))
      chosen = PackedType::F32;
    // Said only where a low precision was asked for or stored: an f32
    // compile of f32 weights packs every layer in f32.
    if (remarks && asked != PackedType::F32) {
      static constexpr const char *names[] = {"f32", "bf16", "int8"};
      InFlightDiagnostic remark = op->emitRemark();
      remark << "linear layer"
             << (weight.name ? " '" + weight.name.str() + "'" : "") << " ["
             << weight.shape[0] << ", " << weight.shape[1] << "] runs in ";
      if (chosen == PackedType::Blocks) {
        const GgufBlockInfo &info = *weight.blockType;
        std::string bytes;
        llvm::raw_string_ostream(bytes)
            << llvm::format("%.4g", packedBytesPerWeight(info))
            << " bytes per weight, the file's "
            << llvm::format("%.4g", fileBytesPerWeight(info));
        remark << info.name << " (the file's blocks: " << bytes << ")";
      } else {
        remark << names[int(chosen)]
               << (chosen == PackedType::F32 ? " (--keep-fp32)" : "");
      }
    }
    return chosen;
  }
};

struct PackLinearPattern : OpRewritePattern<LinearOp> {
  PackLinearPattern(MLIRContext *ctx, int64_t panelWidth,
                    const PackingPolicy &policy, PackedTables &tables,
                    bool &badBlocks)
      : OpRewritePattern(ctx), panelWidth(panelWidth), policy(policy),
        tables(tables), badBlocks(badBlocks) {}

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    if (!inputType.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    std::optional<ConstantView> weight = getConstantView(op.getWeight());
    if (!weight || weight->shape.size() != 2)
      return rewriter.notifyMatchFailure(op, "weight is not a constant");
    std::optional<ConstantView> bias;
    if (op.getBias()) {
      bias = getConstantView(op.getBias());
      if (!bias)
        return rewriter.notifyMatchFailure(op, "bias is not a constant");
    }
    GemmWeight gemm{*weight, /*kMajor=*/false};
    PackedType type = policy.typeFor(op, gemm);
    std::optional<DecodedBlocks> decoded;
    if (type == PackedType::Blocks) {
      std::string error;
      decoded = decodeGgufBlocks(*weight->blockType, weight->blocks, gemm.n(),
                                 gemm.k(), error);
      if (!decoded) {
        // Said once: the op stays as it is, and the pass fails.
        if (!badBlocks)
          op.emitError() << "weight"
                         << (weight->name ? " '" + weight->name.str() + "'"
                                          : "")
                         << ": " << error;
        badBlocks = true;
        return failure();
      }
    }
    BlockConstants packed =
        rewriteToPacked(op, op.getInput(), gemm, bias,
                        /*biasIsAdd=*/false, panelWidth, type,
                        decoded ? &*decoded : nullptr, rewriter);
    tables.record(*weight, /*kMajor=*/false, type, packed);
    return success();
  }

  int64_t panelWidth;
  const PackingPolicy &policy;
  PackedTables &tables;
  bool &badBlocks;
};

/// `x @ W` with a constant `W [K, N]` is a linear layer whose weight is
/// stored transposed: it gets the same packed GEMM, and a following
/// `+ b` with a constant `b [N]` becomes its bias.
struct PackMatmulPattern : OpRewritePattern<MatmulOp> {
  PackMatmulPattern(MLIRContext *ctx, int64_t panelWidth,
                    const PackingPolicy &policy)
      : OpRewritePattern(ctx), panelWidth(panelWidth), policy(policy) {}

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    if (!lhsType.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    std::optional<ConstantView> weight = getConstantView(op.getRhs());
    if (!weight || weight->shape.size() != 2)
      return rewriter.notifyMatchFailure(op, "right operand is not a constant "
                                             "matrix");
    // Batch dims come from the left operand alone, so its leading dims are
    // the GEMM's rows, as for a linear layer.
    if (lhsType.getRank() != resultType.getRank() ||
        lhsType.getShape().drop_back() != resultType.getShape().drop_back())
      return rewriter.notifyMatchFailure(op, "result is not [..., M, N]");
    GemmWeight gemm{*weight, /*kMajor=*/true};
    std::optional<ConstantView> bias;
    if (op->hasOneUse())
      bias = getAddedBias(op.getResult(), *op->getUsers().begin(), gemm.n());
    // The stored [K, N] matrix, as the remark names it.
    PackedType type = policy.typeFor(op, gemm);
    rewriteToPacked(op, op.getLhs(), gemm, bias, /*biasIsAdd=*/bias.has_value(),
                    panelWidth, type, /*decoded=*/nullptr, rewriter);
    return success();
  }

  int64_t panelWidth;
  const PackingPolicy &policy;
};

struct TfmPackLinearPass
    : mlir::tfm::impl::TfmPackLinearBase<TfmPackLinearPass> {
  using Base::Base;
  void runOnOperation() override {
    // Two vectors per panel: the micro-kernel's width (docs/compiler.md).
    int64_t panelWidth =
        2 * std::max<int64_t>((multiversion ? 512 : vectorBits) / 32, 1);
    PackingPolicy policy;
    if (weightType == "bf16")
      policy.type = PackedType::BF16;
    else if (weightType == "i8")
      policy.type = PackedType::I8;
    else if (weightType != "f32") {
      getOperation().emitError("tfm-pack-linear: unknown weight-type '")
          << weightType << "' (f32, bf16 or i8)";
      return signalPassFailure();
    }
    for (const std::string &pattern : keepF32) {
      llvm::Expected<llvm::GlobPattern> glob =
          llvm::GlobPattern::create(pattern);
      if (!glob) {
        getOperation().emitError("tfm-pack-linear: bad keep-f32 pattern '")
            << pattern << "': " << llvm::toString(glob.takeError());
        return signalPassFailure();
      }
      policy.keepF32.push_back(std::move(*glob));
    }
    policy.remarks = remarks;
    RewritePatternSet patterns(&getContext());
    PackedTables tables;
    bool badBlocks = false;
    patterns.add<PackLinearPattern>(&getContext(), panelWidth, policy, tables,
                                    badBlocks);
    patterns.add<PackMatmulPattern>(&getContext(), panelWidth, policy);
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    // Two weights of equal values are still two weights: merging their
    // constants would lose the names --keep-fp32 and the remarks go by.
    config.enableConstantCSE(false);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)) ||
        badBlocks)
      return signalPassFailure();
    tables.redirectEmbeddings(getOperation(), remarks);
    if (failed(quantizeEmbeddings(getOperation(), remarks)))
      return signalPassFailure();
    // The blocks are packed now; a weight still used as f32 (an embedding
    // gather) keeps its dequantized values alone.
    getOperation().walk([](arith::ConstantOp constant) {
      for (const GgufBlockInfo &info : ggufBlockTypes())
        constant->removeAttr(info.attribute);
    });
  }
};
} // namespace
