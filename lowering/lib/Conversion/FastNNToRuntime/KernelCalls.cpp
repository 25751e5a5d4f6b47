//===- KernelCalls.cpp - fastnn ops that run as runtime kernels -----------===//
//
// Each such op gets a descriptor (a constant global laid out like the C
// struct in abi.h: int64_t words, doubles stored bit for bit), a kernel
// created from it in fnn_model_init, and a *_forward call in fnn_model_run.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "fastnn/runtime/abi.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::lowering {

/// Appends an fnn_shape: rank, then FNN_MAX_RANK dimensions padded with 0.
void appendShape(SmallVectorImpl<int64_t> &words, ArrayRef<int64_t> shape) {
  words.push_back(shape.size());
  for (int64_t i = 0; i < FNN_MAX_RANK; ++i)
    words.push_back(i < static_cast<int64_t>(shape.size()) ? shape[i] : 0);
}

void appendShape(SmallVectorImpl<int64_t> &words, Value value) {
  appendShape(words, cast<RankedTensorType>(value.getType()).getShape());
}

void appendDouble(SmallVectorImpl<int64_t> &words, double value) {
  int64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  words.push_back(bits);
}

int64_t dtypeOf(Type type) {
  if (type.isF32())
    return FNN_F32;
  if (type.isF16())
    return FNN_F16;
  if (type.isBF16())
    return FNN_BF16;
  if (type.isF64())
    return FNN_F64;
  if (type.isInteger(1))
    return FNN_BOOL;
  if (type.isUnsignedInteger(8))
    return FNN_U8;
  switch (type.getIntOrFloatBitWidth()) {
  case 64:
    return FNN_I64;
  case 32:
    return FNN_I32;
  case 16:
    return FNN_I16;
  default:
    return FNN_I8;
  }
}

int64_t dtypeOf(Value value) {
  return dtypeOf(cast<RankedTensorType>(value.getType()).getElementType());
}

int64_t layoutWord(Layout layout) {
  return layout == Layout::NHWC ? FNN_NHWC : FNN_NCHW;
}

bool hasBackwardUser(Operation *op) {
  return llvm::any_of(op->getUsers(), [](Operation *user) {
    return user->hasTrait<OpTrait::fastnn::ReusesForwardKernel>();
  });
}

namespace {

bool exceedsMaxRank(Operation *op) {
  auto tooLarge = [](Type type) {
    auto ranked = dyn_cast<RankedTensorType>(type);
    return ranked && ranked.getRank() > FNN_MAX_RANK;
  };
  return llvm::any_of(op->getOperandTypes(), tooLarge) ||
         llvm::any_of(op->getResultTypes(), tooLarge);
}

} // namespace

LLVM::LLVMFuncOp RunEmitter::runtimeFunction(StringRef name, Type result,
                                             ArrayRef<Type> params) {
  // Every kernel call and trace span asks: a module lookup scans the module.
  LLVM::LLVMFuncOp &function = runtimeFunctions[name];
  if (!function)
    function = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
  if (function)
    return function;
  OpBuilder builder(module.getBodyRegion());
  builder.setInsertionPointToStart(module.getBody());
  function =
      LLVM::LLVMFuncOp::create(builder, module.getLoc(), name,
                               LLVM::LLVMFunctionType::get(result, params));
  return function;
}

int64_t RunEmitter::createKernel(Location loc, StringRef createName,
                                 ArrayRef<int64_t> descriptor,
                                 std::optional<int64_t> forward) {
  MLIRContext *context = module.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(context);
  auto i64 = IntegerType::get(context, 64);
  int64_t index = kernelCount++;

  OpBuilder globals(module.getBodyRegion());
  globals.setInsertionPointToStart(module.getBody());
  auto words = static_cast<int64_t>(descriptor.size());
  auto descriptorGlobal = LLVM::GlobalOp::create(
      globals, loc, LLVM::LLVMArrayType::get(i64, words), /*isConstant=*/true,
      LLVM::Linkage::Internal, "fnn_desc_" + std::to_string(index),
      DenseIntElementsAttr::get(RankedTensorType::get({words}, i64),
                                descriptor));

  OpBuilder &b = initBuilder;
  SmallVector<Type> params = {ptrType, ptrType};
  SmallVector<Value> args = {
      device, LLVM::AddressOfOp::create(b, loc, descriptorGlobal)};
  if (forward) {
    params.push_back(ptrType);
    Value table =
        LLVM::AddressOfOp::create(b, loc, ptrType, "fnn_kernel_table");
    Value slot = LLVM::GEPOp::create(b, loc, ptrType, ptrType, table,
                                     ArrayRef<LLVM::GEPArg>{*forward});
    args.push_back(LLVM::LoadOp::create(b, loc, ptrType, slot));
  }
  LLVM::LLVMFuncOp create = runtimeFunction(createName, ptrType, params);
  Value kernel = LLVM::CallOp::create(b, loc, create, args).getResult();
  Value null = LLVM::ZeroOp::create(b, loc, ptrType);
  Value failed =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, kernel, null);
  Block *next = new Block();
  b.getInsertionBlock()->getParent()->push_back(next);
  cf::CondBranchOp::create(b, loc, failed, initFailure, ValueRange{}, next,
                           ValueRange{});
  b.setInsertionPointToEnd(next);
  Value table = LLVM::AddressOfOp::create(b, loc, ptrType, "fnn_kernel_table");
  Value slot = LLVM::GEPOp::create(b, loc, ptrType, ptrType, table,
                                   ArrayRef<LLVM::GEPArg>{index});
  LLVM::StoreOp::create(b, loc, kernel, slot);
  return index;
}

void RunEmitter::callForward(Location loc, StringRef forwardName,
                             int64_t kernel, ArrayRef<Value> pointers) {
  OpBuilder &b = runBuilder;
  auto ptrType = LLVM::LLVMPointerType::get(module.getContext());
  SmallVector<Type> params(pointers.size() + 1, ptrType);
  LLVM::LLVMFuncOp forward = runtimeFunction(
      forwardName, LLVM::LLVMVoidType::get(module.getContext()), params);
  Value table = LLVM::AddressOfOp::create(b, loc, ptrType, "fnn_kernel_table");
  Value slot = LLVM::GEPOp::create(b, loc, ptrType, ptrType, table,
                                   ArrayRef<LLVM::GEPArg>{kernel});
  SmallVector<Value> args = {LLVM::LoadOp::create(b, loc, ptrType, slot)};
  llvm::append_range(args, pointers);
  LLVM::CallOp::create(b, loc, forward, args);
}

bool RunEmitter::isSameOnEveryRun(Value value) const {
  // The value's own producer, not its root: a view (a folded 1x1 filter
  // reshaped to OHWI) of a first-run temporary is written at init itself
  // while the temporary it views is not.
  Operation *producer = value.getDefiningOp();
  return constantState && producer && isWrittenAtInit(producer);
}

LogicalResult RunEmitter::lowerKernelOp(Operation *op) {
  if (exceedsMaxRank(op))
    return op->emitOpError("has a tensor of rank above ")
           << FNN_MAX_RANK << ", which the runtime kernels do not take";
  Location loc = op->getLoc();
  int64_t postOp = layout.postOps.lookup(op);
  SmallVector<int64_t> words;
  auto p = [&](Value value) { return pointer(loc, value); };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](Conv2DOp conv) {
        // An fnn_conv2d_desc.
        auto appendConv = [&](Conv2DOp c) {
          appendShape(words, c.getInput());
          appendShape(words, c.getFilter());
          appendShape(words, c.getResult());
          llvm::append_values(words, dtypeOf(c.getResult()),
                              layoutWord(c.getLayout()),
                              int64_t(c.getBias() != nullptr),
                              layout.postOps.lookup(c), c.getGroups());
          llvm::append_range(words, c.getStrides());
          llvm::append_range(words, c.getPads());
          llvm::append_range(words, c.getDilations());
          words.push_back(isSameOnEveryRun(c.getFilter()));
        };
        auto bias = [&](Conv2DOp c) {
          return c.getBias() ? p(c.getBias()) : nullPointer(loc);
        };
        if (layout.chainedFrom.count(conv)) {
          // An fnn_conv2d_chain_desc: the count, then three descriptors
          // (zeros for a missing third).
          SmallVector<Conv2DOp, 3> chain = {conv};
          while (Operation *previous = layout.chainedFrom.lookup(chain[0]))
            chain.insert(chain.begin(), cast<Conv2DOp>(previous));
          words.push_back(chain.size());
          SmallVector<Value> pointers = {p(chain[0].getInput())};
          for (Conv2DOp c : chain) {
            appendConv(c);
            llvm::append_values(pointers, p(c.getFilter()), bias(c),
                                p(c.getResult()));
          }
          size_t descriptorWords = (words.size() - 1) / chain.size();
          words.resize(1 + 3 * descriptorWords, 0);
          pointers.resize(1 + 3 * 3, nullPointer(loc));
          int64_t k = createKernel(loc, "fnn_conv2d_chain_create", words);
          callForward(loc, "fnn_conv2d_chain_forward", k, pointers);
          return success();
        }
        appendConv(conv);
        int64_t k = createKernel(loc, "fnn_conv2d_create", words);
        callForward(loc, "fnn_conv2d_forward", k,
                    {p(conv.getInput()), p(conv.getFilter()), bias(conv),
                     p(conv.getResult())});
        return success();
      })
      .Case<MaxPool2DOp, AvgPool2DOp>([&](auto pool) {
        constexpr bool isMax = std::is_same_v<decltype(pool), MaxPool2DOp>;
        appendShape(words, pool.getInput());
        appendShape(words, pool.getResult());
        int64_t countIncludePad = 0;
        if constexpr (!isMax)
          countIncludePad = pool.getCountIncludePad();
        llvm::append_values(
            words, dtypeOf(pool.getResult()), layoutWord(pool.getLayout()),
            int64_t(isMax ? FNN_POOL_MAX : FNN_POOL_AVG), countIncludePad);
        llvm::append_range(words, pool.getKernelShape());
        llvm::append_range(words, pool.getStrides());
        llvm::append_range(words, pool.getPads());
        llvm::append_range(words, pool.getDilations());
        int64_t k =
            createKernel(loc,
                         hasBackwardUser(pool) ? "fnn_pool2d_train_create"
                                               : "fnn_pool2d_create",
                         words);
        callForward(loc, "fnn_pool2d_forward", k,
                    {p(pool.getInput()), p(pool.getResult())});
        return success();
      })
      .Case([&](BatchNormOp bn) {
        appendShape(words, bn.getInput());
        llvm::append_values(words, dtypeOf(bn.getResult()),
                            layoutWord(bn.getLayout()), postOp);
        appendDouble(words, bn.getEpsilon().convertToDouble());
        int64_t k = createKernel(loc, "fnn_batch_norm_create", words);
        callForward(loc, "fnn_batch_norm_forward", k,
                    {p(bn.getInput()), p(bn.getScale()), p(bn.getBias()),
                     p(bn.getMean()), p(bn.getVariance()), p(bn.getResult())});
        return success();
      })
      .Case([&](LRNOp lrn) -> LogicalResult {
        // The kernels' window is centred (oneDNN's; ONNX's even windows
        // reach one channel further up than down): refuse at compile time
        // what fnn_lrn_create would refuse at run time.
        if (lrn.getSize() % 2 == 0)
          return lrn.emitOpError("size ")
                 << lrn.getSize()
                 << " is even; fastnn's LRN kernels take odd sizes only "
                    "(re-export the model with an odd size)";
        appendShape(words, lrn.getInput());
        llvm::append_values(words, dtypeOf(lrn.getResult()), int64_t(FNN_NCHW),
                            lrn.getSize());
        appendDouble(words, lrn.getAlpha().convertToDouble());
        appendDouble(words, lrn.getBeta().convertToDouble());
        appendDouble(words, lrn.getBias().convertToDouble());
        int64_t k = createKernel(loc,
                                 hasBackwardUser(lrn) ? "fnn_lrn_train_create"
                                                      : "fnn_lrn_create",
                                 words);
        callForward(loc, "fnn_lrn_forward", k,
                    {p(lrn.getInput()), p(lrn.getResult())});
        return success();
      })
      .Case([&](MatMulOp matmul) {
        Value bias = layout.fusedAddend.lookup(matmul);
        appendShape(words, matmul.getA());
        appendShape(words, matmul.getB());
        appendShape(words, matmul.getResult());
        llvm::append_values(
            words, dtypeOf(matmul.getResult()), int64_t(matmul.getTransposeA()),
            int64_t(matmul.getTransposeB()), int64_t(bias != nullptr), postOp,
            int64_t(isSameOnEveryRun(matmul.getB())));
        int64_t k = createKernel(loc, "fnn_matmul_create", words);
        callForward(loc, "fnn_matmul_forward", k,
                    {p(matmul.getA()), p(matmul.getB()),
                     bias ? p(bias) : nullPointer(loc), p(matmul.getResult())});
        return success();
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto softmax) {
        appendShape(words, softmax.getInput());
        llvm::append_values(
            words, dtypeOf(softmax.getResult()), softmax.getAxis(),
            int64_t(std::is_same_v<decltype(softmax), LogSoftmaxOp>));
        int64_t k = createKernel(loc, "fnn_softmax_create", words);
        callForward(loc, "fnn_softmax_forward", k,
                    {p(softmax.getInput()), p(softmax.getResult())});
        return success();
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(
          [&](auto reduce) {
            using OpT = decltype(reduce);
            int64_t kind = std::is_same_v<OpT, ReduceSumOp>    ? FNN_REDUCE_SUM
                           : std::is_same_v<OpT, ReduceMeanOp> ? FNN_REDUCE_MEAN
                           : std::is_same_v<OpT, ReduceMaxOp>  ? FNN_REDUCE_MAX
                                                               : FNN_REDUCE_MIN;
            auto input = cast<RankedTensorType>(reduce.getInput().getType());
            // The kernel writes the keepdims shape; without keepdims the
            // result is the same bytes under a shorter shape.
            SmallVector<int64_t> kept(input.getShape());
            for (int64_t axis : reduce.getAxes())
              kept[axis] = 1;
            appendShape(words, input.getShape());
            appendShape(words, kept);
            llvm::append_values(words, dtypeOf(reduce.getResult()), kind);
            int64_t k = createKernel(loc, "fnn_reduce_create", words);
            callForward(loc, "fnn_reduce_forward", k,
                        {p(reduce.getInput()), p(reduce.getResult())});
            return success();
          })
      .Default([](Operation *op) {
        return op->emitOpError("has no runtime kernel");
      });
}

} // namespace fastnn::lowering
