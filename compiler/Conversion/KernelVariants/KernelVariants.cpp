//===- KernelVariants.cpp - Per-CPU variants of outlined kernels ----------===//
#include "compiler/Conversion/KernelVariants/KernelVariants.h"
#include "dialects/Tfm/IR/TfmDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {
constexpr StringLiteral kCpuLevel = "__tfm_cpu_level";
constexpr StringLiteral kCpuLevelCache = "__tfm_cpu_level_cache";
constexpr StringLiteral kCpuLevelEnv = "__tfm_cpu_level_env";

/// i32 __tfm_cpu_level(void): 6 with level 5's and AMX-TILE, AMX-BF16 and
/// AMX-INT8 whose tile data Linux lets the process use (XCR0 bits 17 and
/// 18, then arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) through
/// libc's syscall), 5 with AVX-512 F/DQ/BW/VL enabled by the OS and VNNI
/// and BF16, 4 with VNNI, 3 with neither, 2 with AVX2 and FMA, else 1;
/// capped by $TFM_CPU_LEVEL; cached.
LLVM::LLVMFuncOp getOrCreateCpuLevel(ModuleOp module) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(kCpuLevel))
    return existing;
  MLIRContext *ctx = module.getContext();
  Location loc = module.getLoc();
  OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  auto i32 = b.getI32Type();
  auto i8 = b.getI8Type();
  auto ptr = LLVM::LLVMPointerType::get(ctx);

  LLVM::GlobalOp::create(b, loc, i32, /*isConstant=*/false,
                         LLVM::Linkage::Internal, kCpuLevelCache,
                         b.getI32IntegerAttr(0));
  StringRef envName("TFM_CPU_LEVEL\0", 14);
  LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(i8, envName.size()),
                         /*isConstant=*/true, LLVM::Linkage::Internal,
                         kCpuLevelEnv, b.getStringAttr(envName));
  auto getenv = module.lookupSymbol<LLVM::LLVMFuncOp>("getenv");
  if (!getenv)
    getenv = LLVM::LLVMFuncOp::create(b, loc, "getenv",
                                      LLVM::LLVMFunctionType::get(ptr, {ptr}));
  auto i64 = b.getI64Type();
  auto syscallType = LLVM::LLVMFunctionType::get(i64, {i64}, /*isVarArg=*/true);
  auto syscall = module.lookupSymbol<LLVM::LLVMFuncOp>("syscall");
  if (!syscall)
    syscall = LLVM::LLVMFuncOp::create(b, loc, "syscall", syscallType);

  auto fn = LLVM::LLVMFuncOp::create(b, loc, kCpuLevel,
                                     LLVM::LLVMFunctionType::get(i32, {}));
  fn.setLinkage(LLVM::Linkage::Internal);
  Block *entry = fn.addEntryBlock(b);
  Region &body = fn.getBody();
  auto newBlock = [&](ArrayRef<Type> args = {}) {
    Block *block = new Block();
    body.push_back(block);
    for (Type t : args)
      block->addArgument(t, loc);
    return block;
  };
  Block *detect = newBlock(), *readXcr0 = newBlock(), *decide = newBlock({i32});
  Block *requestTiles = newBlock(), *ranked = newBlock({i32});
  Block *readEnv = newBlock(), *store = newBlock({i32}),
        *done = newBlock({i32});

  auto c32 = [&](int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(v));
  };
  auto cpuid = [&](int64_t leaf, int64_t subleaf = 0) {
    auto regs = LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32});
    return LLVM::InlineAsmOp::create(
               b, loc, regs, ValueRange{c32(leaf), c32(subleaf)}, "cpuid",
               "={ax},={bx},={cx},={dx},{ax},{cx}", /*has_side_effects=*/true,
               /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
               LLVM::AsmDialectAttr(), ArrayAttr())
        .getResult(0);
  };
  auto field = [&](Value s, int64_t i) {
    return LLVM::ExtractValueOp::create(b, loc, s, ArrayRef<int64_t>{i});
  };
  auto allBits = [&](Value word, uint32_t bits) {
    Value masked = LLVM::AndOp::create(b, loc, word, c32(int32_t(bits)));
    return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, masked,
                                c32(int32_t(bits)));
  };

  // entry: the cached level, once known.
  b.setInsertionPointToStart(entry);
  Value cache = LLVM::AddressOfOp::create(b, loc, ptr, kCpuLevelCache);
  Value cached =
      LLVM::LoadOp::create(b, loc, i32, cache, 4, false, false, false, false,
                           LLVM::AtomicOrdering::monotonic);
  Value known =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, cached, c32(0));
  LLVM::CondBrOp::create(b, loc, known, done, ValueRange{cached}, detect,
                         ValueRange{});

  // detect: CPUID leaves 0, 1 and 7; XGETBV only where the OS enabled it.
  b.setInsertionPointToStart(detect);
  Value maxLeaf = field(cpuid(0), 0);
  Value ecx1 = field(cpuid(1), 2);
  Value has7 =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::uge, maxLeaf, c32(7));
  Value leaf7 = cpuid(7);
  Value ebx7 = LLVM::SelectOp::create(b, loc, has7, field(leaf7, 1), c32(0));
  Value ecx7 = LLVM::SelectOp::create(b, loc, has7, field(leaf7, 2), c32(0));
  Value edx7 = LLVM::SelectOp::create(b, loc, has7, field(leaf7, 3), c32(0));
  // Sub-leaf 1 of leaf 7 (AVX512-BF16 in EAX bit 5) exists where sub-leaf
  // 0's EAX says so.
  Value has7x1 =
      LLVM::AndOp::create(b, loc, has7,
                          LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::uge,
                                               field(leaf7, 0), c32(1)));
  Value eax7x1 =
      LLVM::SelectOp::create(b, loc, has7x1, field(cpuid(7, 1), 0), c32(0));
  Value osxsave = allBits(ecx1, 1u << 27);
  LLVM::CondBrOp::create(b, loc, osxsave, readXcr0, ValueRange{}, decide,
                         ValueRange{c32(0)});

  b.setInsertionPointToStart(readXcr0);
  auto pair = LLVM::LLVMStructType::getLiteral(ctx, {i32, i32});
  Value xcr0 =
      field(LLVM::InlineAsmOp::create(b, loc, pair, ValueRange{c32(0)},
                                      "xgetbv", "={ax},={dx},{cx}", true, false,
                                      LLVM::tailcallkind::TailCallKind::None,
                                      LLVM::AsmDialectAttr(), ArrayAttr())
                .getResult(0),
            0);
  LLVM::BrOp::create(b, loc, ValueRange{xcr0}, decide);

  b.setInsertionPointToStart(decide);
  Value os = decide->getArgument(0);
  // AVX (28), F16C (29) and FMA (12) in leaf 1, AVX2 (5) in leaf 7,
  // XMM|YMM state.
  Value avx2 = LLVM::AndOp::create(
      b, loc,
      LLVM::AndOp::create(b, loc,
                          allBits(ecx1, (1u << 28) | (1u << 29) | (1u << 12)),
                          allBits(ebx7, 1u << 5)),
      allBits(os, 0x6));
  // AVX-512 F (16), DQ (17), BW (30), VL (31); opmask and ZMM state too.
  Value avx512 = LLVM::AndOp::create(
      b, loc,
      LLVM::AndOp::create(
          b, loc, avx2,
          allBits(ebx7, (1u << 16) | (1u << 17) | (1u << 30) | (1u << 31))),
      allBits(os, 0xE6));
  // AVX512-VNNI (leaf 7 ECX bit 11), AVX512-BF16 (leaf 7.1 EAX bit 5).
  Value vnni = LLVM::AndOp::create(b, loc, avx512, allBits(ecx7, 1u << 11));
  Value bf16 = LLVM::AndOp::create(b, loc, vnni, allBits(eax7x1, 1u << 5));
  Value level = LLVM::SelectOp::create(
      b, loc, bf16, c32(5),
      LLVM::SelectOp::create(
          b, loc, vnni, c32(4),
          LLVM::SelectOp::create(
              b, loc, avx512, c32(3),
              LLVM::SelectOp::create(b, loc, avx2, c32(2), c32(1)))));
  // AMX-BF16 (leaf 7 EDX bit 22), AMX-TILE (24), AMX-INT8 (25); XTILECFG
  // and XTILEDATA state (XCR0 bits 17, 18).
  Value amx = LLVM::AndOp::create(
      b, loc,
      LLVM::AndOp::create(b, loc, bf16,
                          allBits(edx7, (1u << 22) | (1u << 24) | (1u << 25))),
      allBits(os, (1u << 17) | (1u << 18)));
  LLVM::CondBrOp::create(b, loc, amx, requestTiles, ValueRange{}, ranked,
                         ValueRange{level});

  // requestTiles: Linux hands out the tile data state on request only
  // (arch_prctl is syscall 158, ARCH_REQ_XCOMP_PERM 0x1023,
  // XFEATURE_XTILEDATA 18); level 6 where it says yes.
  b.setInsertionPointToStart(requestTiles);
  auto c64 = [&](int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  Value status =
      LLVM::CallOp::create(b, loc, syscall,
                           ValueRange{c64(158), c64(0x1023), c64(18)})
          .getResult();
  Value granted =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, status, c64(0));
  LLVM::BrOp::create(
      b, loc,
      ValueRange{LLVM::SelectOp::create(b, loc, granted, c32(6), c32(5))},
      ranked);

  b.setInsertionPointToStart(ranked);
  level = ranked->getArgument(0);
  Value name = LLVM::AddressOfOp::create(b, loc, ptr, kCpuLevelEnv);
  Value env =
      LLVM::CallOp::create(b, loc, getenv, ValueRange{name}).getResult();
  Value noEnv = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, env,
                                     LLVM::ZeroOp::create(b, loc, ptr));
  LLVM::CondBrOp::create(b, loc, noEnv, store, ValueRange{level}, readEnv,
                         ValueRange{});

  // readEnv: TFM_CPU_LEVEL=1..5 lowers the level (never raises it).
  b.setInsertionPointToStart(readEnv);
  Value digit =
      LLVM::SExtOp::create(b, loc, i32, LLVM::LoadOp::create(b, loc, i8, env));
  Value cap = LLVM::SubOp::create(b, loc, digit, c32('0'));
  Value valid = LLVM::AndOp::create(
      b, loc,
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::sge, cap, c32(1)),
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, cap, level));
  LLVM::BrOp::create(
      b, loc, ValueRange{LLVM::SelectOp::create(b, loc, valid, cap, level)},
      store);

  b.setInsertionPointToStart(store);
  LLVM::StoreOp::create(b, loc, store->getArgument(0), cache, 4, false, false,
                        false, LLVM::AtomicOrdering::monotonic);
  LLVM::BrOp::create(b, loc, ValueRange{store->getArgument(0)}, done);

  b.setInsertionPointToStart(done);
  LLVM::ReturnOp::create(b, loc, ValueRange{done->getArgument(0)});
  return fn;
}
} // namespace

SmallVector<KernelVariant>
mlir::tfm::getKernelVariants(int64_t vectorBits, bool multiversion,
                             DotProduct dot, TargetDotProducts target,
                             bool amx) {
  if (!multiversion) {
    KernelVariant only{vectorBits, 1, "", ""};
    only.bf16Dot = dot == DotProduct::BF16 && target.bf16 && vectorBits == 512;
    only.int8Dot = dot == DotProduct::Int8 && target.int8 && vectorBits == 512;
    return {only};
  }
  // The baseline's tuning splits unaligned 256-bit accesses in two; every
  // CPU with AVX2 does them at full speed.
  // F16C (every AVX2 CPU has it; level 2 requires it) widens f16 KV
  // caches with vcvtph2ps.
  std::string avx512 = "+avx,+avx2,+fma,+f16c,+avx512f,+avx512dq,+avx512bw,"
                       "+avx512vl,-slow-unaligned-mem-32";
  SmallVector<KernelVariant> variants = {
      {128, 1, "", "_sse"},
      {256, 2, "+avx,+avx2,+fma,+f16c,-slow-unaligned-mem-32", "_avx2"},
      {512, 3, avx512, "_avx512"}};
  if (dot == DotProduct::Int8) {
    variants.push_back({512, 4, avx512 + ",+avx512vnni", "_avx512vnni"});
    variants.back().int8Dot = true;
  } else if (dot == DotProduct::BF16) {
    variants.push_back(
        {512, 5, avx512 + ",+avx512vnni,+avx512bf16", "_avx512bf16"});
    variants.back().bf16Dot = true;
  }
  if (amx && dot != DotProduct::FMA) {
    variants.push_back({512, 6,
                        avx512 + ",+avx512vnni,+avx512bf16,+amx-tile,"
                                 "+amx-bf16,+amx-int8",
                        "_amx"});
    variants.back().bf16Dot = dot == DotProduct::BF16;
    variants.back().int8Dot = dot == DotProduct::Int8;
    variants.back().amx = true;
  }
  return variants;
}

void mlir::tfm::setKernelTarget(func::FuncOp task,
                                const KernelVariant &variant) {
  if (variant.features.empty())
    return;
  // func-to-llvm carries the attribute over to llvm.func's target_features.
  task->setAttr("target_features", LLVM::TargetFeaturesAttr::get(
                                       task.getContext(), variant.features));
}

Value mlir::tfm::emitCpuLevel(OpBuilder &b, Location loc, ModuleOp module) {
  return LLVM::CallOp::create(b, loc, getOrCreateCpuLevel(module), ValueRange{})
      .getResult();
}

void mlir::tfm::emitVariantSwitch(
    OpBuilder &b, Location loc, ModuleOp module,
    ArrayRef<KernelVariant> variants,
    function_ref<void(const KernelVariant &)> emitCall) {
  if (variants.size() == 1) {
    emitCall(variants.front());
    return;
  }
  Value level = emitCpuLevel(b, loc, module);
  // The level of the last variant the CPU's level reaches: levels need not
  // be consecutive (an i8 kernel's variants are 1, 2, 3 and 4; a CPU at 5
  // runs the fourth).
  auto constant = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  Value chosen = constant(variants.front().level);
  SmallVector<int64_t> cases;
  for (const KernelVariant &variant : variants.drop_front()) {
    Value reaches = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                          level, constant(variant.level));
    chosen = arith::SelectOp::create(b, loc, reaches, constant(variant.level),
                                     chosen);
    cases.push_back(variant.level);
  }
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), chosen);
  auto dispatch = scf::IndexSwitchOp::create(b, loc, TypeRange{}, index, cases,
                                             cases.size());
  auto fill = [&](Region &region, const KernelVariant &variant) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&region.emplaceBlock());
    emitCall(variant);
    scf::YieldOp::create(b, loc);
  };
  for (auto [i, variant] : llvm::enumerate(variants.drop_front()))
    fill(dispatch.getCaseRegions()[i], variant);
  fill(dispatch.getDefaultRegion(), variants.front());
}

FailureOr<func::FuncOp> mlir::tfm::createMultiversionTask(
    OpBuilder &at, Location loc, StringRef prefix, TypeRange argTypes,
    ArrayRef<KernelVariant> variants,
    function_ref<LogicalResult(const KernelVariant &, func::FuncOp)>
        fillVariant) {
  auto module =
      at.getInsertionBlock()->getParent()->getParentOfType<ModuleOp>();
  std::string base;
  for (unsigned n = 0;; ++n) {
    base = (prefix + Twine(n)).str();
    bool taken = module.lookupSymbol(base) != nullptr;
    for (const KernelVariant &variant : variants)
      taken |= module.lookupSymbol(base + variant.suffix) != nullptr;
    if (!taken)
      break;
  }
  OpBuilder b(at.getInsertionBlock(), at.getInsertionPoint());
  FunctionType type = b.getFunctionType(argTypes, {});
  auto createTask = [&](StringRef name) {
    auto task = func::FuncOp::create(b, loc, name, type);
    task.setPrivate();
    setTaskFunction(task);
    task.addEntryBlock();
    return task;
  };
  SmallVector<func::FuncOp> bodies;
  for (const KernelVariant &variant : variants) {
    func::FuncOp body = createTask(base + variant.suffix);
    setKernelTarget(body, variant);
    if (failed(fillVariant(variant, body)))
      return failure();
    bodies.push_back(body);
  }
  if (variants.size() == 1)
    return bodies.front();
  func::FuncOp dispatcher = createTask(base);
  OpBuilder inside = OpBuilder::atBlockBegin(&dispatcher.getBody().front());
  ValueRange args = dispatcher.getArguments();
  emitVariantSwitch(inside, loc, module, variants,
                    [&](const KernelVariant &variant) {
                      size_t i = &variant - variants.data();
                      func::CallOp::create(inside, loc, bodies[i], args);
                    });
  func::ReturnOp::create(inside, loc);
  return dispatcher;
}

LogicalResult
mlir::tfm::lowerTransposesToShuffles(MLIRContext *ctx,
                                     ArrayRef<Operation *> transposes) {
  SmallVector<Operation *> wide, narrow;
  for (Operation *op : transposes) {
    VectorType type = cast<vector::TransposeOp>(op).getSourceVectorType();
    bool sixteen = type.getRank() == 2 && type.getDimSize(0) == 16 &&
                   type.getDimSize(1) == 16 &&
                   type.getElementTypeBitWidth() == 32;
    (sixteen ? wide : narrow).push_back(op);
  }
  for (auto [lowering, ops] :
       {std::pair{vector::VectorTransposeLowering::Shuffle16x16, &wide},
        std::pair{vector::VectorTransposeLowering::Shuffle1D, &narrow}}) {
    RewritePatternSet patterns(ctx);
    vector::populateVectorTransposeLoweringPatterns(patterns, lowering);
    if (failed(applyOpPatternsGreedily(*ops, std::move(patterns))))
      return failure();
  }
  return success();
}
