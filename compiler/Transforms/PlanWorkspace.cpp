//===- PlanWorkspace.cpp - One scratch allocation per run, reused by lifetime //
//
// Bufferization gives every intermediate tensor its own `memref.alloc`, and
// buffer deallocation frees them all at the end of the function: a 12-layer
// encoder keeps every layer's scratch alive at once, and each run maps fresh
// pages for all of it. This pass plans the scratch instead: each buffer's
// lifetime runs from its allocation to the last top-level op that touches it
// (through any view), buffers whose lifetimes do not overlap share bytes, and
// one allocation sized for the plan replaces them all. Sizes may depend on
// the inputs' dynamic dims: offsets are computed at run time, in the
// function's prologue, from those dims. The prologue also checks what a
// run-time size can do wrong: a size that does not fit in 64 bits, or an
// allocation that fails, makes the model return kOutOfMemoryStatus before
// anything runs (docs/artifact.md).
//
// A model function also takes the caller's workspace (a trailing
// memref<?xi8>, NULL and 0 bytes for none): when one is given, the plan is
// laid out in it and the run allocates nothing, which is what an app that
// runs a model in a loop or under a real-time budget wants. A separate
// function, cloned from the prologue, computes the workspace's size from the
// dims alone, so that the caller can allocate it up front.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMPLANWORKSPACE
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
constexpr int64_t kAlignment = 64;
/// The model's status when its scratch cannot be allocated (-1 is the entry
/// points' bad-dimension status; run-time checks use positive codes).
constexpr int32_t kOutOfMemoryStatus = -2;
/// Larger workspaces are refused without asking the allocator: no machine
/// has them, and the allocator's own rounding must not wrap.
constexpr int64_t kMaxWorkspaceBytes = int64_t(1) << 56;
/// The model's status when the caller's workspace is smaller than the plan
/// for these dims (the entry points return -3 for a malformed one).
constexpr int32_t kWorkspaceTooSmallStatus = -4;
/// What the size function returns when the plan cannot be allocated for
/// these dims (it exceeds kMaxWorkspaceBytes or 64 bits).
constexpr int64_t kSizeTooLarge = -2;
/// Names the size function on the model function (tfm-emit-entry-points).
constexpr llvm::StringLiteral kWorkspaceSizeAttr = "tfm.workspace_size";

/// Rebuilds index values at the start of the function from the function's
/// arguments alone, or fails: a buffer's size is planned before anything
/// runs.
class PrologueBuilder {
public:
  explicit PrologueBuilder(func::FuncOp func)
      : entry(&func.getBody().front()), b(func.getContext()) {
    b.setInsertionPointToStart(entry);
  }

  /// `value` (an index) recomputed in the prologue.
  FailureOr<Value> hoist(Value value) {
    if (Value known = mapping.lookupOrNull(value))
      return known;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() != entry)
        return failure();
      return value;
    }
    Operation *def = value.getDefiningOp();
    FailureOr<Value> result = failure();
    if (auto dim = dyn_cast<memref::DimOp>(def)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      if (index)
        result = hoistDim(dim.getSource(), *index);
    } else if (def->hasTrait<OpTrait::ConstantLike>() ||
               (isa<arith::ArithDialect>(def->getDialect()) && isPure(def) &&
                def->getNumRegions() == 0)) {
      IRMapping operands;
      for (Value operand : def->getOperands()) {
        FailureOr<Value> hoisted = hoist(operand);
        if (failed(hoisted))
          return failure();
        operands.map(operand, *hoisted);
      }
      result = b.clone(*def, operands)
                   ->getResult(cast<OpResult>(value).getResultNumber());
    }
    if (succeeded(result))
      mapping.map(value, *result);
    return result;
  }

  /// Dimension `index` of `memref`, following allocations and reshapes back
  /// to the arguments.
  FailureOr<Value> hoistDim(Value memref, int64_t index) {
    auto type = cast<MemRefType>(memref.getType());
    if (!type.isDynamicDim(index))
      return constant(type.getDimSize(index));
    if (auto arg = dyn_cast<BlockArgument>(memref)) {
      if (arg.getOwner() != entry)
        return failure();
      return memref::DimOp::create(b, arg.getLoc(), arg, index).getResult();
    }
    Operation *def = memref.getDefiningOp();
    if (auto alloc = dyn_cast<memref::AllocOp>(def))
      return hoist(alloc.getDynamicSizes()[type.getDynamicDimIndex(index)]);
    if (auto cast = dyn_cast<memref::CastOp>(def))
      return hoistDim(cast.getSource(), index);
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(def)) {
      OpFoldResult size = expand.getMixedOutputShape()[index];
      if (auto attr = dyn_cast<Attribute>(size))
        return constant(cast<IntegerAttr>(attr).getInt());
      return hoist(cast<Value>(size));
    }
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def)) {
      Value product = constant(1);
      // Held in a local: the range-for would otherwise iterate a group of a
      // temporary already destroyed.
      SmallVector<ReassociationIndices> groups =
          collapse.getReassociationIndices();
      for (int64_t source : groups[index]) {
        FailureOr<Value> dim = hoistDim(collapse.getSrc(), source);
        if (failed(dim))
          return failure();
        product = b.createOrFold<arith::MulIOp>(def->getLoc(), product, *dim);
      }
      return product;
    }
    return failure();
  }

  Value constant(int64_t value) {
    return arith::ConstantIndexOp::create(b, b.getUnknownLoc(), value);
  }

  /// a * b, noting in `overflowed` whether it wrapped (unsigned).
  Value checkedMul(Value a, Value c) {
    Location loc = b.getUnknownLoc();
    if (isConstant(a) && isConstant(c))
      return b.createOrFold<arith::MulIOp>(loc, a, c);
    auto product = arith::MulUIExtendedOp::create(b, loc, a, c);
    Value wrapped = b.createOrFold<arith::CmpIOp>(
        loc, arith::CmpIPredicate::ne, product.getHigh(), constant(0));
    noteOverflow(wrapped);
    return product.getLow();
  }

  /// a + b, noting in `overflowed` whether it wrapped (unsigned).
  Value checkedAdd(Value a, Value c) {
    Location loc = b.getUnknownLoc();
    if (isConstantIntValue(a, 0))
      return c;
    if (isConstantIntValue(c, 0))
      return a;
    Value sum = b.createOrFold<arith::AddIOp>(loc, a, c);
    if (!(isConstant(a) && isConstant(c)))
      noteOverflow(b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                                 sum, a));
    return sum;
  }

  void noteOverflow(Value wrapped) {
    overflowed = overflowed ? b.createOrFold<arith::OrIOp>(b.getUnknownLoc(),
                                                           overflowed, wrapped)
                            : wrapped;
  }

  /// Whether any checked operation wrapped; null when none could.
  Value overflowed;

  OpBuilder &builder() { return b; }

private:
  static bool isConstant(Value v) { return getConstantIntValue(v).has_value(); }

  Block *entry;
  OpBuilder b;
  IRMapping mapping;
};

struct PlannedBuffer {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  /// Positions in the entry block: the allocation and the last use.
  unsigned begin = 0, end = 0;
  Value bytes, offset;
};

struct TfmPlanWorkspacePass
    : tfm::impl::TfmPlanWorkspaceBase<TfmPlanWorkspacePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A module pass: a model gets a sibling function for its workspace size.
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    SymbolTable symbols(module);
    for (func::FuncOp func : funcs)
      if (failed(plan(func, symbols)))
        return signalPassFailure();
  }

  LogicalResult plan(func::FuncOp func, SymbolTable &symbols) {
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return success();
    Block &entry = func.getBody().front();
    SmallVector<PlannedBuffer> buffers = findBuffers(entry);
    if (buffers.empty())
      return success();

    PrologueBuilder prologue(func);
    OpBuilder &b = prologue.builder();
    Location loc = func.getLoc();
    // Sizes first: a buffer whose size cannot be known up front keeps its
    // own allocation.
    SmallVector<PlannedBuffer> planned;
    for (PlannedBuffer &buffer : buffers) {
      MemRefType type = buffer.alloc.getType();
      // Static dims first: one checked multiplication per dynamic dim.
      int64_t staticBytes = type.getElementTypeBitWidth() / 8;
      for (int64_t d : type.getShape())
        if (!ShapedType::isDynamic(d))
          staticBytes *= d;
      Value bytes = prologue.constant(staticBytes);
      bool known = true;
      for (int64_t i = 0; i < type.getRank() && known; ++i) {
        if (!type.isDynamicDim(i))
          continue;
        FailureOr<Value> dim = prologue.hoistDim(buffer.alloc, i);
        if (failed(dim)) {
          known = false;
          break;
        }
        bytes = prologue.checkedMul(bytes, *dim);
      }
      if (!known)
        continue;
      // Rounded up so that every buffer starts on a cache line.
      Value mask = prologue.constant(kAlignment - 1);
      Value padded = prologue.checkedAdd(bytes, mask);
      buffer.bytes = b.createOrFold<arith::AndIOp>(
          loc, padded, prologue.constant(~(kAlignment - 1)));
      planned.push_back(buffer);
    }
    if (planned.empty())
      return success();

    // Each buffer goes above every earlier one still alive when it is
    // allocated; the workspace is the highest end.
    Value total = prologue.constant(0);
    for (size_t i = 0; i < planned.size(); ++i) {
      Value offset = prologue.constant(0);
      for (size_t j = 0; j < i; ++j) {
        if (planned[j].end < planned[i].begin)
          continue;
        Value top = prologue.checkedAdd(planned[j].offset, planned[j].bytes);
        offset = b.createOrFold<arith::MaxUIOp>(loc, offset, top);
      }
      planned[i].offset = offset;
      Value top = prologue.checkedAdd(offset, planned[i].bytes);
      total = b.createOrFold<arith::MaxUIOp>(loc, total, top);
    }
    // A size that wrapped, or more than any machine has, is never asked for.
    Value tooLarge =
        b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::ugt, total,
                                      prologue.constant(kMaxWorkspaceBytes));
    prologue.noteOverflow(tooLarge);
    Value refused = prologue.overflowed;
    // What is asked of an allocator or of the caller's workspace: nothing
    // when the size is refused, so that the failure is the size's (-2).
    Value ask = total;
    std::optional<int64_t> alwaysRefused = getConstantIntValue(refused);
    if (!alwaysRefused)
      ask = b.createOrFold<arith::SelectOp>(loc, refused, prologue.constant(0),
                                            total);
    else if (*alwaysRefused)
      ask = prologue.constant(0);

    auto bytesType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
    Value workspace, unusable, failStatus;
    Value callerOwned; // i1: the workspace is the caller's, never freed here.
    if (canGuard(func)) {
      FailureOr<func::FuncOp> sizeFn = emitSizeFunction(
          func, symbols, b.getInsertionPoint(), total, refused);
      if (failed(sizeFn))
        return failure();
      func->setAttr(kWorkspaceSizeAttr, FlatSymbolRefAttr::get(*sizeFn));
      if (failed(func.insertArgument(func.getNumArguments(), bytesType,
                                     DictionaryAttr(), loc)))
        return func.emitError("cannot add the workspace argument");
      Value given = entry.getArguments().back();
      // The entry points pass (NULL, 0) for no workspace and have refused
      // a malformed one (docs/artifact.md). Zero bytes need no memory, so
      // they never allocate either.
      Value zero = prologue.constant(0);
      Value givenBytes = memref::DimOp::create(b, loc, given, 0);
      Value givenAddress =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, given);
      Value hasGiven = b.createOrFold<arith::CmpIOp>(
          loc, arith::CmpIPredicate::ne, givenAddress, zero);
      Value nothingToAsk = b.createOrFold<arith::CmpIOp>(
          loc, arith::CmpIPredicate::eq, ask, zero);
      callerOwned = b.createOrFold<arith::OrIOp>(loc, hasGiven, nothingToAsk);
      Value tooSmall = b.createOrFold<arith::AndIOp>(
          loc, hasGiven,
          b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                        givenBytes, ask));
      auto choice = scf::IfOp::create(b, loc, TypeRange{bytesType}, callerOwned,
                                      /*addThenBlock=*/true,
                                      /*addElseBlock=*/true);
      {
        OpBuilder then = OpBuilder::atBlockEnd(choice.thenBlock());
        Value view = memref::ViewOp::create(then, loc, bytesType, given, zero,
                                            ValueRange{ask});
        scf::YieldOp::create(then, loc, view);
        OpBuilder otherwise = OpBuilder::atBlockEnd(choice.elseBlock());
        Value own = memref::AllocOp::create(otherwise, loc, bytesType, ask,
                                            b.getI64IntegerAttr(kAlignment));
        scf::YieldOp::create(otherwise, loc, own);
      }
      workspace = choice.getResult(0);
      Value address =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, workspace);
      Value null = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                 address, zero);
      Value allocated = b.createOrFold<arith::XOrIOp>(
          loc, callerOwned,
          arith::ConstantOp::create(b, loc, b.getBoolAttr(true)).getResult());
      Value allocFailed = b.createOrFold<arith::AndIOp>(loc, allocated, null);
      unusable = b.createOrFold<arith::OrIOp>(
          loc, refused,
          b.createOrFold<arith::OrIOp>(loc, tooSmall, allocFailed));
      // A size that cannot be allocated says so even with a workspace:
      // then `ask` is 0 and `tooSmall` false.
      failStatus = b.createOrFold<arith::SelectOp>(
          loc, tooSmall, constantI32(b, loc, kWorkspaceTooSmallStatus),
          constantI32(b, loc, kOutOfMemoryStatus));
    } else {
      workspace = memref::AllocOp::create(b, loc, bytesType, ask,
                                          b.getI64IntegerAttr(kAlignment));
      Value address =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, workspace);
      Value null = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                 address, prologue.constant(0));
      unusable = b.createOrFold<arith::OrIOp>(loc, refused, null);
    }

    // The guard first: `b` inserts before the body's first op, which may be
    // one of the allocations erased below.
    guardBody(func, b, unusable, failStatus);
    for (PlannedBuffer &buffer : planned) {
      OpBuilder at(buffer.alloc);
      auto view = memref::ViewOp::create(
          at, buffer.alloc.getLoc(), buffer.alloc.getType(), workspace,
          buffer.offset, buffer.alloc.getDynamicSizes());
      buffer.alloc.getResult().replaceAllUsesWith(view.getResult());
      buffer.alloc.erase();
      buffer.dealloc.erase();
    }
    OpBuilder atEnd(entry.getTerminator());
    if (!callerOwned) {
      memref::DeallocOp::create(atEnd, loc, workspace);
      return success();
    }
    Value allocated = atEnd.createOrFold<arith::XOrIOp>(
        loc, callerOwned,
        arith::ConstantOp::create(atEnd, loc, atEnd.getBoolAttr(true))
            .getResult());
    auto release = scf::IfOp::create(atEnd, loc, allocated,
                                     /*withElseRegion=*/false);
    OpBuilder inRelease = OpBuilder::atBlockBegin(release.thenBlock());
    memref::DeallocOp::create(inRelease, loc, workspace);
    return success();
  }

  static Value constantI32(OpBuilder &b, Location loc, int32_t value) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(value));
  }

  /// Whether `func` is a model function whose body guardBody can put under
  /// a status: only such a function may change its type, as nothing calls it
  /// before the entry points exist.
  static bool canGuard(func::FuncOp func) {
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    bool hasStatus =
        ret.getNumOperands() == 1 && ret.getOperand(0).getType().isInteger(32);
    return tfm::hasSignature(func) &&
           ret.getNumOperands() == (hasStatus ? 1u : 0u);
  }

  /// `<func>_workspace_size(<func's arguments>) -> index`: the prologue's ops
  /// before `end`, which compute `total` and `refused` from the arguments'
  /// dims, cloned into a function of their own that returns the workspace's
  /// bytes, or kSizeTooLarge. The entry points call it with NULL data
  /// pointers, so it must read nothing but the arguments' sizes.
  FailureOr<func::FuncOp> emitSizeFunction(func::FuncOp func,
                                           SymbolTable &symbols,
                                           Block::iterator end, Value total,
                                           Value refused) {
    Location loc = func.getLoc();
    OpBuilder b(func);
    b.setInsertionPointAfter(func);
    auto type = b.getFunctionType(func.getArgumentTypes(), b.getIndexType());
    auto sizeFn = func::FuncOp::create(
        b, loc, (func.getSymName() + "_workspace_size").str(), type);
    symbols.insert(sizeFn);
    Block *body = sizeFn.addEntryBlock();
    IRMapping mapping;
    Block &entry = func.getBody().front();
    mapping.map(entry.getArguments(), body->getArguments());
    b.setInsertionPointToStart(body);
    for (Operation &op : llvm::make_range(entry.begin(), end)) {
      bool readsOnlySizes =
          isa<memref::DimOp>(op) || isa<arith::ArithDialect>(op.getDialect());
      if (!readsOnlySizes || op.getNumRegions() != 0)
        return op.emitError("the workspace size would depend on '")
               << op.getName() << "', which may read memory";
      for (Value operand : op.getOperands())
        if (!mapping.contains(operand))
          return op.emitError("the workspace size would depend on a value "
                              "computed after the prologue");
      b.clone(op, mapping);
    }
    Value size = mapping.lookupOrNull(total);
    Value sizeRefused = mapping.lookupOrNull(refused);
    if (!size || !sizeRefused)
      return func.emitError("the workspace size is not computed in the "
                            "prologue");
    std::optional<int64_t> alwaysRefused = getConstantIntValue(refused);
    Value tooLarge = arith::ConstantIndexOp::create(b, loc, kSizeTooLarge);
    if (!alwaysRefused)
      size = arith::SelectOp::create(b, loc, sizeRefused, tooLarge, size);
    else if (*alwaysRefused)
      size = tooLarge;
    func::ReturnOp::create(b, loc, size);
    return sizeFn;
  }

  /// Runs everything after the prologue only when the workspace exists;
  /// otherwise the model returns `failStatus` (kOutOfMemoryStatus when
  /// null). A model without a status result (no run-time checks) gets one.
  void guardBody(func::FuncOp func, OpBuilder &b, Value failed,
                 Value failStatus) {
    Block &entry = func.getBody().front();
    Location loc = func.getLoc();
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    Type i32 = b.getI32Type();
    bool hasStatus =
        ret.getNumOperands() == 1 && ret.getOperand(0).getType() == i32;
    if (!canGuard(func))
      return;
    Value ok = b.createOrFold<arith::XOrIOp>(
        loc, failed,
        arith::ConstantOp::create(b, loc, b.getBoolAttr(true)).getResult());
    auto guarded = scf::IfOp::create(b, loc, TypeRange{i32}, ok,
                                     /*addThenBlock=*/true,
                                     /*addElseBlock=*/true);
    Block *then = guarded.thenBlock();
    then->getOperations().splice(then->end(), entry.getOperations(),
                                 std::next(guarded->getIterator()),
                                 ret->getIterator());
    OpBuilder inside = OpBuilder::atBlockEnd(then);
    Value status = hasStatus ? ret.getOperand(0)
                             : arith::ConstantOp::create(
                                   inside, loc, inside.getI32IntegerAttr(0))
                                   .getResult();
    scf::YieldOp::create(inside, loc, status);
    OpBuilder otherwise = OpBuilder::atBlockEnd(guarded.elseBlock());
    scf::YieldOp::create(otherwise, loc,
                         failStatus
                             ? failStatus
                             : constantI32(otherwise, loc, kOutOfMemoryStatus));
    OpBuilder atReturn(ret);
    func::ReturnOp::create(atReturn, loc, guarded.getResult(0));
    ret.erase();
    if (!hasStatus)
      func.setFunctionType(FunctionType::get(
          func.getContext(), func.getArgumentTypes(), TypeRange{i32}));
  }

  /// Allocations in the entry block with identity layouts, freed in the
  /// entry block, reaching nothing but ops of this function.
  SmallVector<PlannedBuffer> findBuffers(Block &entry) {
    DenseMap<Operation *, unsigned> position;
    for (auto [i, op] : llvm::enumerate(entry))
      position[&op] = i;
    auto topLevel = [&](Operation *op) {
      return entry.findAncestorOpInBlock(*op);
    };

    SmallVector<PlannedBuffer> buffers;
    for (Operation &op : entry) {
      auto alloc = dyn_cast<memref::AllocOp>(&op);
      if (!alloc || !alloc.getType().getLayout().isIdentity() ||
          !alloc.getType().getElementType().isIntOrFloat() ||
          alloc.getType().getElementTypeBitWidth() % 8 != 0 ||
          alloc.getSymbolOperands().size() != 0)
        continue;
      PlannedBuffer buffer;
      buffer.alloc = alloc;
      buffer.begin = buffer.end = position[&op];
      bool escapes = false;
      SmallVector<Value> aliases = {alloc.getResult()};
      while (!aliases.empty() && !escapes) {
        Value alias = aliases.pop_back_val();
        for (OpOperand &use : alias.getUses()) {
          Operation *user = use.getOwner();
          if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
            if (alias != alloc.getResult() || dealloc->getBlock() != &entry ||
                buffer.dealloc) {
              escapes = true;
              break;
            }
            buffer.dealloc = dealloc;
            continue;
          }
          if (isa<func::ReturnOp, func::CallOp>(user) ||
              (isa<memref::StoreOp>(user) &&
               cast<memref::StoreOp>(user).getValueToStore() == alias)) {
            escapes = true;
            break;
          }
          if (auto view = dyn_cast<ViewLikeOpInterface>(user))
            if (view.getViewSource() == alias)
              for (Value result : user->getResults())
                if (isa<BaseMemRefType>(result.getType()))
                  aliases.push_back(result);
          Operation *ancestor = topLevel(user);
          if (!ancestor) {
            escapes = true;
            break;
          }
          buffer.end = std::max(buffer.end, position[ancestor]);
        }
      }
      if (!escapes && buffer.dealloc)
        buffers.push_back(buffer);
    }
    return buffers;
  }
};
} // namespace
