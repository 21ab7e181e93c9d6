//===- ModelBuilderDecoder.cpp - Layers of Llama-family decoders ----------===//
//
// RMSNorm, SiLU/sigmoid and rotary position embeddings (RoPE) with the
// semantics of transformers' Llama, Qwen2 and Gemma code, composed from the
// builder's elementwise ops and reductions: they lower, tile and fuse as
// any other elementwise chain does.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/ModelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

FailureOr<Tensor> ModelBuilder::sigmoid(const Tensor &x, Location loc) {
  if (!isa<FloatType>(x.elementType()))
    return emitError(loc) << "sigmoid needs a float tensor, got "
                          << x.elementType();
  // Composed of several ops: computed in f32 and rounded once, as PyTorch's
  // kernel does.
  if (isLowPrecisionFloat(x.elementType()))
    return computeIn(builder.getF32Type(), x, loc,
                     [&](const Tensor &wide) { return sigmoid(wide, loc); });
  // 1 / (1 + exp(-x)): exp overflows to inf for x < -88 (f32), giving 0.
  FailureOr<Tensor> negated = unary(UnaryFn::neg, x, loc);
  if (failed(negated))
    return failure();
  FailureOr<Tensor> e = unary(UnaryFn::exp, *negated, loc);
  FailureOr<Tensor> one = constant(1.0, x.elementType(), loc);
  if (failed(e) || failed(one))
    return failure();
  FailureOr<Tensor> denominator = add(*one, *e, loc);
  if (failed(denominator))
    return failure();
  return binary(BinaryFn::div, *one, *denominator, loc);
}

FailureOr<Tensor> ModelBuilder::silu(const Tensor &x, Location loc) {
  if (!isa<FloatType>(x.elementType()))
    return emitError(loc) << "silu needs a float tensor, got "
                          << x.elementType();
  if (isLowPrecisionFloat(x.elementType()))
    return computeIn(builder.getF32Type(), x, loc,
                     [&](const Tensor &wide) { return silu(wide, loc); });
  FailureOr<Tensor> s = sigmoid(x, loc);
  if (failed(s))
    return failure();
  return binary(BinaryFn::mul, x, *s, loc);
}

FailureOr<Tensor> ModelBuilder::rmsNorm(const Tensor &x,
                                        const std::optional<Tensor> &weight,
                                        double eps, double weightOffset,
                                        Location loc) {
  if (x.rank() < 1 || !isa<FloatType>(x.elementType()))
    return emitError(loc) << "rms_norm needs a float tensor of rank 1 or "
                             "more, got "
                          << formatShape(x.shape);
  if (!std::isfinite(eps) || eps < 0)
    return emitError(loc) << "rms_norm: eps must be finite and non-negative, "
                             "got "
                          << eps;
  if (!std::isfinite(weightOffset))
    return emitError(loc) << "rms_norm: weight_offset must be finite";
  // In f32 (the weights' type when given), rounded once.
  if (isLowPrecisionFloat(x.elementType()) &&
      (!weight ||
       (isa<FloatType>(weight->elementType()) && !weight->sameElementType(x))))
    return computeIn(weight ? weight->elementType() : builder.getF32Type(), x,
                     loc, [&](const Tensor &wide) {
                       return rmsNorm(wide, weight, eps, weightOffset, loc);
                     });
  if (weight && (weight->rank() != 1 || weight->shape[0] != x.shape.back() ||
                 !weight->sameElementType(x)))
    return emitError(loc) << "rms_norm: weight " << formatShape(weight->shape)
                          << " must be [" << x.shape.back().str()
                          << "] (it normalizes the last dim of "
                          << formatShape(x.shape) << ")";
  // x * rsqrt(mean(x^2, -1) + eps) * (weight_offset + weight).
  FailureOr<Tensor> squares = binary(BinaryFn::mul, x, x, loc);
  if (failed(squares))
    return failure();
  FailureOr<Tensor> meanSquare =
      reduce(ReduceKind::mean, *squares, {-1}, /*keepdim=*/true, loc);
  FailureOr<Tensor> epsilon = constant(eps, x.elementType(), loc);
  if (failed(meanSquare) || failed(epsilon))
    return failure();
  FailureOr<Tensor> shifted = add(*meanSquare, *epsilon, loc);
  if (failed(shifted))
    return failure();
  FailureOr<Tensor> inverse = unary(UnaryFn::rsqrt, *shifted, loc);
  if (failed(inverse))
    return failure();
  FailureOr<Tensor> normalized = binary(BinaryFn::mul, x, *inverse, loc);
  if (failed(normalized) || !weight)
    return normalized;
  Tensor scale = *weight;
  if (weightOffset != 0) {
    FailureOr<Tensor> offset = constant(weightOffset, x.elementType(), loc);
    if (failed(offset))
      return failure();
    FailureOr<Tensor> shiftedWeight = add(*offset, *weight, loc);
    if (failed(shiftedWeight))
      return failure();
    scale = *shiftedWeight;
  }
  return binary(BinaryFn::mul, *normalized, scale, loc);
}

/// The inverse frequencies 1 / theta^(2i / d) of rotary dims d, with
/// transformers' rope_scaling applied ("linear": divided by the factor;
/// "llama3": long wavelengths divided by the factor, short ones kept, those
/// between interpolated), as transformers computes them
/// (`_compute_default_rope_parameters`, `_compute_llama3_parameters`), in
/// double and rounded once.
static SmallVector<double> inverseFrequencies(int64_t dims,
                                              const RopeOptions &options) {
  SmallVector<double> inverse;
  for (int64_t i = 0; i < dims; i += 2)
    inverse.push_back(1.0 / std::pow(options.theta, double(i) / double(dims)));
  if (options.scaling == RopeScaling::linear) {
    for (double &f : inverse)
      f /= options.factor;
  } else if (options.scaling == RopeScaling::llama3) {
    double context = double(options.originalMaxPositions);
    double lowWavelength = context / options.lowFreqFactor;
    double highWavelength = context / options.highFreqFactor;
    for (double &f : inverse) {
      double wavelength = 2 * M_PI / f;
      if (wavelength > lowWavelength) {
        f /= options.factor;
      } else if (!(wavelength < highWavelength)) {
        double smooth = (context / wavelength - options.lowFreqFactor) /
                        (options.highFreqFactor - options.lowFreqFactor);
        f = (1 - smooth) * f / options.factor + smooth * f;
      }
    }
  }
  return inverse;
}

FailureOr<Tensor> ModelBuilder::rope(const Tensor &x, const Tensor &positions,
                                     const RopeOptions &options, Location loc) {
  auto fail = [&]() { return emitError(loc) << "rope: "; };
  if (x.rank() < 2 || !isa<FloatType>(x.elementType()))
    return fail() << "x must be a float tensor [..., seq, head_dim], got "
                  << formatShape(x.shape);
  const Dim &headDim = x.shape.back();
  if (headDim.isSymbolic())
    return fail() << "the head dimension of " << formatShape(x.shape)
                  << " must be static";
  int64_t rotary = options.rotaryDims.value_or(headDim.size);
  if (rotary <= 0 || rotary % 2 || rotary > headDim.size)
    return fail() << "rotary_dims must be even and in [2, " << headDim.size
                  << "], got " << rotary;
  if (!(options.theta > 1) || !std::isfinite(options.theta))
    return fail() << "theta must be finite and above 1, got " << options.theta;
  if (options.scaling != RopeScaling::none &&
      (!(options.factor > 0) || !std::isfinite(options.factor)))
    return fail() << "the scaling factor must be finite and positive, got "
                  << options.factor;
  if (options.scaling == RopeScaling::llama3 &&
      (!(options.highFreqFactor > options.lowFreqFactor) ||
       !(options.lowFreqFactor > 0) || options.originalMaxPositions <= 0))
    return fail() << "llama3 scaling needs 0 < low_freq_factor < "
                     "high_freq_factor and original_max_positions > 0";
  Type positionType = positions.elementType();
  if (!positionType.isInteger(64) && !positionType.isInteger(32))
    return fail() << "positions must be i32 or i64, got " << positionType;
  // positions [..., seq] name the rows of x [..., seq, d]: their last dim is
  // x's second-to-last, and their leading dims broadcast against x's
  // leading dims (a heads dim between batch and seq is inserted).
  int64_t prank = positions.rank();
  if (prank < 1 || prank > x.rank() - 1 ||
      positions.shape.back() != x.shape[x.rank() - 2])
    return fail() << "positions " << formatShape(positions.shape)
                  << " must end in the sequence dimension of x "
                  << formatShape(x.shape) << " (x is [..., seq, head_dim])";

  // Angles, sines and the rotation in f32 (a bf16 position would be off by
  // far more than a rounding), the result rounded once.
  if (isLowPrecisionFloat(x.elementType()))
    return computeIn(builder.getF32Type(), x, loc, [&](const Tensor &wide) {
      return rope(wide, positions, options, loc);
    });
  Type element = x.elementType();
  int64_t half = rotary / 2;
  SmallVector<double> inverse = inverseFrequencies(rotary, options);
  SmallVector<Attribute> values;
  for (double f : inverse)
    values.push_back(FloatAttr::get(element, f));
  auto tableType = RankedTensorType::get({half}, element);
  Tensor frequencies{
      arith::ConstantOp::create(builder, loc,
                                DenseElementsAttr::get(tableType, values))
          .getResult(),
      {Dim::of(half)}};
  if (options.freqFactors) {
    const Tensor &factors = *options.freqFactors;
    if (factors.rank() != 1 || factors.shape[0] != Dim::of(half) ||
        !isa<FloatType>(factors.elementType()))
      return fail() << "freq_factors must be a float vector of rotary_dims / 2 "
                       "= "
                    << half << " values, got " << factors.elementType() << " "
                    << formatShape(factors.shape);
    FailureOr<Tensor> divisors = castTo(factors, element, loc);
    if (failed(divisors))
      return failure();
    FailureOr<Tensor> divided =
        binary(BinaryFn::div, frequencies, *divisors, loc);
    if (failed(divided))
      return failure();
    frequencies = *divided;
  }

  // angles [..., seq, half] = positions * inverse frequencies.
  FailureOr<Tensor> p = castTo(positions, element, loc);
  if (failed(p))
    return failure();
  FailureOr<Tensor> column = unsqueeze(*p, -1, loc);
  if (failed(column))
    return failure();
  FailureOr<Tensor> angles = binary(BinaryFn::mul, *column, frequencies, loc);
  if (failed(angles))
    return failure();
  // Leading dims of positions beyond seq stand for x's first dims; x's
  // dims between them and seq (heads) get a 1.
  if (prank >= 2 && x.rank() - 1 > prank) {
    Shape shape(angles->shape.begin(), angles->shape.end() - 2);
    shape.append(size_t(x.rank() - 1 - prank), Dim::of(1));
    shape.append(angles->shape.end() - 2, angles->shape.end());
    angles = reshape(*angles, shape, loc);
    if (failed(angles))
      return failure();
  }
  FailureOr<Tensor> cos = unary(UnaryFn::cos, *angles, loc);
  FailureOr<Tensor> sin = unary(UnaryFn::sin, *angles, loc);
  if (failed(cos) || failed(sin))
    return failure();

  auto lastDims = [&](const Tensor &t, int64_t start, int64_t stop) {
    SmallVector<IndexItem> items(size_t(t.rank()), IndexItem());
    items.back().start = start;
    items.back().stop = stop;
    return index(t, items, loc);
  };
  // (a, b) -> (a cos - b sin, b cos + a sin).
  auto rotate = [&](const Tensor &a,
                    const Tensor &b) -> FailureOr<std::pair<Tensor, Tensor>> {
    FailureOr<Tensor> ac = binary(BinaryFn::mul, a, *cos, loc);
    FailureOr<Tensor> bs = binary(BinaryFn::mul, b, *sin, loc);
    FailureOr<Tensor> bc = binary(BinaryFn::mul, b, *cos, loc);
    FailureOr<Tensor> as = binary(BinaryFn::mul, a, *sin, loc);
    if (failed(ac) || failed(bs) || failed(bc) || failed(as))
      return failure();
    FailureOr<Tensor> first = binary(BinaryFn::sub, *ac, *bs, loc);
    FailureOr<Tensor> second = add(*bc, *as, loc);
    if (failed(first) || failed(second))
      return failure();
    return std::make_pair(*first, *second);
  };

  SmallVector<Tensor> pieces;
  if (options.style == RopeStyle::half) {
    // transformers' rotate_half: dims i and i + rotary/2 form a pair.
    FailureOr<Tensor> a = lastDims(x, 0, half);
    FailureOr<Tensor> b = lastDims(x, half, rotary);
    if (failed(a) || failed(b))
      return failure();
    FailureOr<std::pair<Tensor, Tensor>> r = rotate(*a, *b);
    if (failed(r))
      return failure();
    pieces = {r->first, r->second};
  } else {
    // llama.cpp's GGUF convention: dims 2i and 2i + 1 form a pair.
    FailureOr<Tensor> rotated = lastDims(x, 0, rotary);
    if (failed(rotated))
      return failure();
    Shape pairs(rotated->shape.begin(), rotated->shape.end() - 1);
    pairs.push_back(Dim::of(half));
    pairs.push_back(Dim::of(2));
    FailureOr<Tensor> grouped = reshape(*rotated, pairs, loc);
    if (failed(grouped))
      return failure();
    FailureOr<Tensor> a = lastDims(*grouped, 0, 1);
    FailureOr<Tensor> b = lastDims(*grouped, 1, 2);
    if (failed(a) || failed(b))
      return failure();
    a = squeeze(*a, {-1}, loc);
    b = squeeze(*b, {-1}, loc);
    if (failed(a) || failed(b))
      return failure();
    FailureOr<std::pair<Tensor, Tensor>> r = rotate(*a, *b);
    if (failed(r))
      return failure();
    FailureOr<Tensor> first = unsqueeze(r->first, -1, loc);
    FailureOr<Tensor> second = unsqueeze(r->second, -1, loc);
    if (failed(first) || failed(second))
      return failure();
    FailureOr<Tensor> interleaved = concat({*first, *second}, -1, loc);
    if (failed(interleaved))
      return failure();
    FailureOr<Tensor> flat = reshape(*interleaved, rotated->shape, loc);
    if (failed(flat))
      return failure();
    pieces = {*flat};
  }
  if (rotary < headDim.size) {
    FailureOr<Tensor> rest = lastDims(x, rotary, headDim.size);
    if (failed(rest))
      return failure();
    pieces.push_back(*rest);
  }
  if (pieces.size() == 1)
    return pieces.front();
  return concat(pieces, -1, loc);
}
