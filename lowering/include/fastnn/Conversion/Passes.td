//===- Passes.td - fastnn lowering passes ------------------*- tablegen -*-===//

#ifndef FASTNN_CONVERSION_PASSES_TD
#define FASTNN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FastNNKernelTypes : Pass<"fastnn-kernel-types", "mlir::ModuleOp"> {
  let summary = "Compute kernel ops in float32 where their kernel has no "
                "half-precision variant";
  let description = [{
    The first pass of the lowering to the runtime ABI. The runtime's
    convolution, matrix product, pooling and batch-norm kernels take
    float32, bfloat16 and float16 (the ops with the `LowPrecision` or
    `FollowsPrecision` trait); the other kernel ops (`RunsAsKernel`:
    softmax, log-softmax, the reductions, LRN and their gradients) take
    float32. A model that computes one of them in half precision (an ONNX
    model exported in float16, a bfloat16 attention) gets its
    half-precision operands widened before the op, which is exact, and its
    results rounded back after it: the op computes in float32, as
    `fastnn-mixed-precision` keeps such ops anyway. Ops that write memory
    are left as they are. float64 is not narrowed: such an op is refused
    by its kernel.

    Before:
    ```mlir
    %m = fastnn.reduce_max %x {axes = array<i64: 1>, keepdims}
        : tensor<4x6xf16> -> tensor<4x1xf16>
    ```
    After:
    ```mlir
    %0 = fastnn.cast %x {to = f32} : tensor<4x6xf16> -> tensor<4x6xf32>
    %1 = fastnn.reduce_max %0 {axes = array<i64: 1>, keepdims}
        : tensor<4x6xf32> -> tensor<4x1xf32>
    %m = fastnn.cast %1 {to = f16} : tensor<4x1xf32> -> tensor<4x1xf16>
    ```
  }];
}

def FastNNPlanFusion : Pass<"fastnn-plan-fusion", "mlir::ModuleOp"> {
  let summary = "Record the target's fusion and code generation choices on "
                "the ops";
  let description = [{
    The target part before `fastnn-lower-to-runtime`, which applies what
    this pass records and decides none of it itself: a target's pipeline
    runs it with its options (`fastnn-cpu-lowering`: `max-loop-reduction`
    4096), and lit tests see the decisions. Accepts the functions
    `fastnn-lower-to-runtime` accepts and plans the ops of each step (a
    function's block, or its sunk loop's body), as discardable attributes:

    - `fastnn.post_op = "relu"` on a float op with the `AcceptsPostOp`
      trait (conv2d, batch_norm, batch_norm_train, matmul) whose result (or
      its view) only a relu reads, and
      `fastnn.fused_into_producer` on that relu: the kernel's epilogue
      applies it (oneDNN post-ops, cuDNN and cuBLASLt epilogues), and the
      relu takes neither memory nor code;
    - `fastnn.post_op = "relu6"` on a conv2d or batch_norm_train whose
      result only a clip 0..6 reads, `fastnn.fused_into_producer` on the
      clip (the inference batch norm and matmul kernels fuse a relu at
      most; a clip's gradient reads the clip's output, so training leaves
      the clip the only reader);
    - `fastnn.accumulate` on a conv2d whose result only an add reads, and
      `fastnn.fused_into_producer` on the add: a residual add computed in
      place, the convolution adding its result to the other addend's
      buffer, which becomes its output. Only where that buffer may be
      overwritten: computed in this step before the convolution (an addend
      computed after it from values available before, ResNet v1's
      subsampled shortcut, moves before it), from the step's inputs (not
      from parameters alone, which an inference step computes once), and
      read by nothing at or after the convolution but the add. A relu or
      relu6 after the add is then the convolution's post-op (sum, then
      activation);
    - `fastnn.residual_fused` on a float batch_norm_train whose normalised
      result only an add reads, the add's other operand (same type)
      computed before the batch norm (a step input or an earlier op, read
      later or not: ResNet's shortcut, which the backward still reads), and
      `fastnn.fused_into_producer` on the add: the kernel adds that
      residual as it normalises (FNN_POST_RESIDUAL), one pass over memory
      instead of three. A relu or relu6 after the add is then the batch
      norm's post-op (add, then activation);
    - `fastnn.bias_fused` on a matmul whose result only an add of a vector
      over its last dimension reads, the vector computed before the matmul
      runs (and no post-op yet), and `fastnn.fused_into_producer` on the
      add: the kernel adds the bias;
    - `fastnn.chained_into_consumer` on a float pointwise conv2d (1x1,
      stride 1, no padding, one group) computed in this step whose result
      (or the activation fused into it) only a depthwise conv2d (groups =
      channels > 1) of the same type and layout reads as its input, neither
      accumulating, and then on that depthwise conv2d if only a pointwise
      conv2d reads it (which may accumulate): the two or three are one
      kernel (fnn_conv2d_chain), MobileNet v2's expansion, depthwise and
      projection convolutions. Each keeps its post-op; the results before
      the last keep their buffers, which a target that runs the
      convolutions in turn writes (CUDA: cuDNN has no such fusion), and the
      CPU kernel does not (oneDNN's fused depthwise post-op, the projection
      reading its output in the kernel's scratch). A pointwise conv2d that
      ends a chain does not start another;
    - `fastnn.inline_into_consumer` on an elementwise op whose result only
      one elementwise op of the same shape reads, at most 8 ops later with
      nothing between that writes memory (an accumulating convolution
      writes its addend's), and whose user reads no
      collective's result: it is computed inside the user's loop nest
      (chains inline whole), without a buffer; and on a transpose read so,
      which the nest reads from its input through the permutation (a
      filter's NCHW -> NHWC transpose and its cast to bf16 are one pass);
    - `fastnn.codegen = "loops"` on f32 reductions where one output element
      reduces at most `max-loop-reduction` elements (a bias gradient, a
      global pool: oneDNN 2.6 runs some of them on its reference
      implementation), `"kernel"` on the other reductions.

    Without this pass the lowering fuses nothing and calls a kernel for
    every reduction. A CUDA pipeline runs it with the thresholds of its own
    kernels.

    Before:
    ```mlir
    %c = fastnn.conv2d %x, %w : ...
    %r = fastnn.relu %c : tensor<1x4x8x8xf32>
    %s = fastnn.reduce_sum %r {axes = array<i64: 2, 3>} : ...
    ```
    After (`max-loop-reduction=4096`):
    ```mlir
    %c = fastnn.conv2d %x, %w {fastnn.post_op = "relu"} : ...
    %r = fastnn.relu %c {fastnn.fused_into_producer} : tensor<1x4x8x8xf32>
    %s = fastnn.reduce_sum %r {axes = array<i64: 2, 3>, fastnn.codegen = "loops"} : ...
    ```
    A residual block's end, before:
    ```mlir
    %b = fastnn.conv2d %h, %w3 : ...
    %s = fastnn.add %b, %shortcut : ...
    %y = fastnn.relu %s : ...
    ```
    After (one kernel call writing into %shortcut's buffer):
    ```mlir
    %b = fastnn.conv2d %h, %w3 {fastnn.accumulate, fastnn.post_op = "relu"} : ...
    %s = fastnn.add %b, %shortcut {fastnn.fused_into_producer} : ...
    %y = fastnn.relu %s {fastnn.fused_into_producer} : ...
    ```
    An inverted residual block, before:
    ```mlir
    %e = fastnn.conv2d %x, %w1 {layout = #fastnn.layout<nhwc>} : ...
    %r = fastnn.clip %e {max = 6.0 : f64, min = 0.0 : f64} : ...
    %d = fastnn.conv2d %r, %w2 {groups = 144 : i64, pads = array<i64: 1, 1, 1, 1>, ...} : ...
    %s = fastnn.clip %d {max = 6.0 : f64, min = 0.0 : f64} : ...
    %p = fastnn.conv2d %s, %w3 {layout = #fastnn.layout<nhwc>} : ...
    %y = fastnn.add %p, %x : ...
    ```
    After (one fnn_conv2d_chain call where the projection is, accumulating
    into %x's buffer):
    ```mlir
    %e = fastnn.conv2d %x, %w1 {fastnn.chained_into_consumer, fastnn.post_op = "relu6", ...} : ...
    %r = fastnn.clip %e {fastnn.fused_into_producer, ...} : ...
    %d = fastnn.conv2d %r, %w2 {fastnn.chained_into_consumer, fastnn.post_op = "relu6", groups = 144 : i64, ...} : ...
    %s = fastnn.clip %d {fastnn.fused_into_producer, ...} : ...
    %p = fastnn.conv2d %s, %w3 {fastnn.accumulate, ...} : ...
    %y = fastnn.add %p, %x {fastnn.fused_into_producer} : ...
    ```
  }];
  let options = [
    Option<"maxLoopReduction", "max-loop-reduction", "int64_t",
           /*default=*/"0",
           "Largest number of elements one output element of an f32 "
           "reduction sums in generated loops (0: every reduction is a "
           "kernel call)">
  ];
}

def FastNNLowerToRuntime : Pass<"fastnn-lower-to-runtime", "mlir::ModuleOp"> {
  let summary = "Lower a fastnn model to runtime kernel calls and loops over "
                "one statically planned arena";
  let description = [{
    Accepts a module of `fastnn.parameter`s and one function (`@forward`,
    or the `entry` option's; e.g. `@train_step`, `@eval_step`) of fastnn
    ops with static shapes (`batch_norm` normalises with its statistics and
    `dropout` is the identity; training uses their `_train` forms). Produces
    the symbols that runtime/include/fastnn/runtime/model.h declares, named
    after the `symbol-prefix` option (default `fnn_model`; `fnn_eval` for
    the evaluation step train.bin also holds):

    - `<prefix>_init(device, arena)`: copies every parameter's and
      constant's initial value (embedded as constant globals) into the arena
      and creates one runtime kernel per conv, pool, batch norm, LRN, matmul,
      softmax and reduction through the ABI of runtime/.../abi.h, from
      descriptors emitted as constant globals; returns -1 if one fails.
      With `initialize-state=false` the parameters are left to the caller
      (the evaluation step's come from the training arena), so their values
      are not embedded a second time. With `external-weights` the
      trainable parameters and batch-norm statistics are not written
      either: their initial values go into the module attribute
      `fastnn.external_weights` (one `{name, role, dtype, value}`
      dictionary per state record, in the order of `<prefix>_state`),
      which fastnnc writes beside the executable as a weights file and
      removes; `<prefix>_external_weights` is then 1 and the driver loads
      them after init. Optimizer slots and constants (shapes, tables the
      computation reads) stay embedded: they are not weights, and slots
      are uniform values filled in place.
    - `<prefix>_run(arena)`: calls each kernel's `*_forward` with pointers
      at compile-time arena offsets, and computes elementwise, cast and
      data-movement ops as `linalg` loops over `memref.view`s of the arena.
      The work of every op (a kernel call or a loop nest) is bracketed by
      `fnn_trace_begin("<op> <location name>")` and `fnn_trace_end()`, the
      spans of timelines; they return at once while tracing is off.
    - `fastnn.allreduce` (a bucket of gradients): its inputs' buffers lie
      back to back in one arena buffer, where the ops producing them write
      (an input still read after the collective starts, or that is state, a
      constant or a function input, is copied in instead); the collective is
      a kernel made at init (`fnn_allreduce_create`), started in place
      where the op stands (`fnn_allreduce_start`) and awaited right before
      the first op that reads a result, at the latest before the return
      (`fnn_allreduce_wait`), so that it overlaps the ops in between. The
      bucket's buffer stays reserved until then.
      A step sunk into a loop (`fastnn-sink-loop`, a function whose body
      is one `fastnn.loop`) runs the loop's body N times in one call, over
      one arena plan: each iteration stores its index where the body reads
      it, fetches its batch with `fnn_input_next` and stores its scalar
      results at its index of the stacked results.
    - `<prefix>_release()` and the metadata `<prefix>_arena_bytes`,
      `<prefix>_io`, `<prefix>_io_names`, `<prefix>_state`,
      `<prefix>_state_names`, `<prefix>_config` and
      `<prefix>_external_weights`.

    Every other global (descriptors, initial values, the kernel table, span
    names) has internal linkage, so objects lowered with different prefixes
    link into one executable.

    Buffers get offsets from a liveness-based plan (greedy by size), so
    activations whose lifetimes do not overlap share memory. Fusion is what
    `fastnn-plan-fusion` recorded on the ops (the target's choice; nothing
    is fused without it): views (reshape, dropout, next_batch) and ops
    fused into their producer (`fastnn.fused_into_producer`: a kernel's
    relu post-op, a matmul's bias add) take no memory and no code, an op
    with `fastnn.inline_into_consumer` is computed inside its user's loop
    nest (no buffer, no span), and a reduction is generated as loops where
    `fastnn.codegen = "loops"`, else a kernel call. Parameters, constants,
    inputs and outputs stay live throughout.

    Before:
    ```mlir
    fastnn.parameter @w trainable = dense<...> : tensor<4x3x3x3xf32>
    func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
      %w = fastnn.param @w : tensor<4x3x3x3xf32>
      %c = fastnn.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : ...
      %r = fastnn.relu %c : tensor<1x4x8x8xf32>
      return %r : tensor<1x4x8x8xf32>
    }
    ```
    After (abridged):
    ```mlir
    llvm.mlir.global internal constant @fnn_desc_0(dense<[...]> : tensor<34xi64>) : !llvm.array<34 x i64>
    func.func @fnn_model_init(%device: !llvm.ptr, %arena: !llvm.ptr) -> i64 {
      llvm.call @fnn_copy_to_device(%device, %wslot, %winit, %bytes) : ...
      %k = llvm.call @fnn_conv2d_create(%device, %desc) : ...   // post_op = relu
      ...
    }
    func.func @fnn_model_run(%arena: !llvm.ptr) {
      llvm.call @fnn_trace_begin(%name) : (!llvm.ptr) -> ()  // "conv2d conv1"
      llvm.call @fnn_conv2d_forward(%k, %x, %w, %null, %out) : ...
      llvm.call @fnn_trace_end() : () -> ()
      return
    }
    ```
    The result is ready for the standard conversion to the LLVM dialect.
  }];
  let dependentDialects = [
    "mlir::LLVM::LLVMDialect", "mlir::memref::MemRefDialect",
    "mlir::linalg::LinalgDialect", "mlir::arith::ArithDialect",
    "mlir::math::MathDialect", "mlir::func::FuncDialect",
    "mlir::cf::ControlFlowDialect", "mlir::scf::SCFDialect"
  ];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"forward\"",
           "Name of the model function to lower">,
    Option<"symbolPrefix", "symbol-prefix", "std::string",
           /*default=*/"\"fnn_model\"",
           "Prefix of the exported symbols (<prefix>_init, _run, ...)">,
    Option<"initializeState", "initialize-state", "bool", /*default=*/"true",
           "Embed the parameters' initial values and copy them into the "
           "arena at init (false: the caller fills the state)">,
    Option<"externalWeights", "external-weights", "bool", /*default=*/"false",
           "Embed no initial value of a trainable parameter or statistic: "
           "list them in the module attribute fastnn.external_weights for "
           "the driver to write beside the executable, which loads them "
           "after init">
  ];
}

def FastNNOutlineLoopNests : Pass<"fastnn-outline-loop-nests",
                                  "mlir::ModuleOp"> {
  let summary = "Outline every outermost scf.parallel loop nest into a "
                "function over a range of its outer iterations";
  let description = [{
    Runs after `convert-linalg-to-parallel-loops` on what
    `fastnn-lower-to-runtime` produced. Each outermost `scf.parallel` with
    constant bounds and no reductions becomes a private function
    `<caller>_loop<N>(%begin: index, %end: index, <captures>)` that runs
    iterations [begin, end) of the nest's outer space: all its dimensions
    but the innermost, linearised (the innermost stays a loop of its own, so
    that LLVM vectorises it). The nest is replaced by a call over the whole
    space, [0, count).

    Values the nest reads from above are recomputed in the function when
    they come from side-effect-free ops (constants, the arena's memref and
    `memref.view`s of it); only the others (e.g. a sunk loop's iteration
    index, the arena pointer itself) become arguments. Nests that differ
    only in the byte offsets of their views (a network's repeated blocks,
    NASNet's cells, a layer's forward and backward elementwise passes on
    same-shaped buffers) share one function that takes those offsets as
    arguments, one function per equivalence class: the code LLVM optimises
    and compiles shrinks with them (nasnet_mobile's training step compiles
    in 24 s instead of 39 s). A function left with one call gets its
    offsets back as constants, so that it sees static offsets of one base
    pointer and LLVM knows which of its buffers are disjoint. The function
    carries
    `fastnn.loop_count` (the outer space's size) and `fastnn.loop_work` (the
    number of operations the nest executes, from its static trip counts),
    which `fastnn-dispatch-loop-bodies` turns into a call of
    `fnn_parallel_for` once the module is in the LLVM dialect.

    Outlining also keeps the run function small: a model of thousands of
    loop nests otherwise gives LLVM's loop passes one huge function.

    Serial nests (the outermost `scf.for` nests without results that call
    nothing, such as a sum into a scalar, which has no parallel dimension)
    move into functions `<caller>_loop<N>(<captures>)` too, shared the same
    way and called directly (`fastnn.serial_nest`, internal linkage once in
    the LLVM dialect); a loop that calls something (a sunk step's loop)
    stays, and the nests inside it move out. Left in the step, each would
    cost SCF lowering a split of the step's block.

    Before:
    ```mlir
    func.func @fnn_model_run(%arena: !llvm.ptr) {
      %m = memref.view %a[%c64][] : memref<256xi8> to memref<4x8xf32>
      scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
        %x = memref.load %m[%i, %j] : memref<4x8xf32>
        ...
      }
      return
    }
    ```
    After:
    ```mlir
    func.func @fnn_model_run(%arena: !llvm.ptr) {
      call @fnn_model_run_loop0(%c0, %c4, %arena) : (index, index, !llvm.ptr) -> ()
      return
    }
    func.func private @fnn_model_run_loop0(%begin: index, %end: index,
        %arena: !llvm.ptr) attributes {fastnn.loop_count = 4 : i64,
                                       fastnn.loop_work = 96 : i64} {
      %m = memref.view ... : memref<256xi8> to memref<4x8xf32>
      scf.for %o = %begin to %end step %c1 {
        scf.for %j = %c0 to %c8 step %c1 {
          %x = memref.load %m[%o, %j] : memref<4x8xf32>
          ...
        }
      }
      return
    }
    ```
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::func::FuncDialect",
                           "mlir::arith::ArithDialect"];
}

def FastNNDispatchLoopBodies : Pass<"fastnn-dispatch-loop-bodies",
                                    "mlir::ModuleOp"> {
  let summary = "Run outlined loop nests through fnn_parallel_for";
  let description = [{
    Runs on the LLVM dialect, after the standard conversions. Every call of
    a function that `fastnn-outline-loop-nests` made (an `llvm.func` with
    `fastnn.loop_count` and `fastnn.loop_work`) becomes a call of the
    runtime's `fnn_parallel_for(task, context, count, work)` (abi.h): the
    call's arguments after the range are stored into a stack struct (one
    `llvm.alloca` in the caller's entry block) and a new function
    `<body>_task(context, begin, end)` loads them and calls the body. The
    runtime splits [0, count) among the OpenMP threads oneDNN runs on, or
    runs it on the calling thread when `work` is too small to pay for
    waking them. The bodies get internal linkage, so LLVM inlines each into
    its task.

    Before:
    ```mlir
    llvm.func @fnn_model_run(%arena: !llvm.ptr) {
      llvm.call @fnn_model_run_loop0(%c0, %c4, %arena) : (i64, i64, !llvm.ptr) -> ()
      llvm.return
    }
    llvm.func @fnn_model_run_loop0(%begin: i64, %end: i64, %arena: !llvm.ptr)
        attributes {fastnn.loop_count = 4 : i64, fastnn.loop_work = 96 : i64}
    ```
    After:
    ```mlir
    llvm.func @fnn_model_run(%arena: !llvm.ptr) {
      %ctx = llvm.alloca %c1 x !llvm.struct<(ptr)> : (i64) -> !llvm.ptr
      llvm.store %arena, %ctx : !llvm.ptr, !llvm.ptr
      %task = llvm.mlir.addressof @fnn_model_run_loop0_task : !llvm.ptr
      llvm.call @fnn_parallel_for(%task, %ctx, %c4, %c96) : ...
      llvm.return
    }
    llvm.func internal @fnn_model_run_loop0_task(%ctx: !llvm.ptr,
                                                 %begin: i64, %end: i64) {
      %arena = llvm.load %ctx : !llvm.ptr -> !llvm.ptr
      llvm.call @fnn_model_run_loop0(%begin, %end, %arena) : ...
      llvm.return
    }
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def FastNNVerifyCPULowered : Pass<"fastnn-verify-cpu-lowered",
                                  "mlir::ModuleOp"> {
  let summary = "Check that a module is what the CPU object emitter accepts";
  let description = [{
    The last pass of `fastnn-cpu-lowering` (and so of `fastnn-cpu`). Accepts
    what the CPU object emitter translates (lowering/lib/Target): a module
    of LLVM dialect ops only, whose runtime calls go to functions the ABI
    declares. Fails, at the op, on:

    - an op of any other dialect (a conversion that left something behind,
      or a pass added after the lowering);
    - a declaration of an `fnn_`-prefixed function that
      runtime/include/fastnn/runtime/abi.h does not declare (the set is read
      from the header when the build is configured), which would fail only
      when train.bin is linked. Other external functions (the C math
      library's) are left to the linker.

    The module is not changed. The CUDA pipeline ends in its own check,
    `fastnn-verify-cuda-lowered`.

    Rejected:
    ```mlir
    llvm.func @fnn_conv3d_forward(!llvm.ptr)   // not in abi.h
    func.func @f() { return }                  // not the LLVM dialect
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def FastNNOutlineGpuKernels : Pass<"fastnn-outline-gpu-kernels",
                                   "mlir::ModuleOp"> {
  let summary = "Make every generated loop nest a CUDA kernel, launched "
                "from the step";
  let description = [{
    The CUDA counterpart of `convert-linalg-to-parallel-loops` plus
    `fastnn-outline-loop-nests`, run on what `fastnn-lower-to-runtime`
    produced. On CUDA the arena is device memory, so no loop nest may stay
    on the host. Each linalg op of the host functions becomes loops whose
    outermost is an `scf.parallel` (an op whose first dimension is a
    reduction, or that has none, runs inside a one-iteration one, on one
    thread; so does a store left outside any nest, as a sunk loop's
    bookkeeping makes), and each outermost nest becomes a `gpu.func` kernel
    in the module's one `gpu.module @fastnn_kernels`, replaced by a
    `gpu.launch_func` of it. The kernel runs one thread per point of the
    nest's whole space (linearised, the innermost dimension fastest so that
    neighbouring threads touch neighbouring elements; blocks of 256 threads)
    and guards the last block's surplus threads; reduction dimensions stay
    sequential loops in each thread, as on the CPU, so both backends sum in
    the same order.

    Values a nest reads from above are recomputed in the kernel when side
    effects allow (constants, the arena's memref and its views), as the CPU
    outliner does; only the others (the arena pointer, a sunk loop's
    iteration) become kernel arguments. A nest with dynamic bounds, or a
    memory access left on the host outside any nest, is an error at the op.

    Before:
    ```mlir
    func.func @fnn_model_run(%arena: !llvm.ptr) {
      %m = memref.view %a[%c64][] : memref<256xi8> to memref<4x8xf32>
      linalg.generic ... outs(%m : memref<4x8xf32>) { ... }
      return
    }
    ```
    After:
    ```mlir
    module attributes {gpu.container_module} {
      func.func @fnn_model_run(%arena: !llvm.ptr) {
        gpu.launch_func @fastnn_kernels::@fnn_model_run_kernel0
            blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
            args(%arena : !llvm.ptr)
        return
      }
      gpu.module @fastnn_kernels {
        gpu.func @fnn_model_run_kernel0(%arena: !llvm.ptr) kernel {
          %m = memref.view ... : memref<256xi8> to memref<4x8xf32>
          %id = <block_id x * 32 + thread_id x>
          scf.if <%id < 32> { <i = %id / 8, j = %id % 8; the body> }
          gpu.return
        }
      }
    }
    ```
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def FastNNLaunchGpuKernels : Pass<"fastnn-launch-gpu-kernels",
                                  "mlir::ModuleOp"> {
  let summary = "Embed the kernels' fatbin and launch them through the "
                "runtime ABI";
  let description = [{
    Runs after `gpu-module-to-binary`, before the host's conversion to the
    LLVM dialect. The `gpu.binary @fastnn_kernels` (a CUDA fatbin: sm_90
    machine code and PTX) becomes an internal constant global,
    `<prefix>_gpu_image`. At the start of `<prefix>_init` the runtime loads
    it, `fnn_gpu_module_load(device, image, bytes)`, and looks up each
    kernel by name, `fnn_gpu_function_create(module, name)`, into the
    internal table `<prefix>_gpu_functions`; either failing makes init
    return -1 (the runtime has recorded why). `<prefix>_release` destroys
    them. Each `gpu.launch_func` becomes `fnn_gpu_launch(function, blocks,
    threads, params)`, params being a stack array of pointers to the
    arguments' values (index arguments as i64). Generated code thereby
    calls abi.h only, as on the CPU, and its launches go onto the device's
    compute stream in order with the kernel library's calls, never
    synchronising.

    Before:
    ```mlir
    gpu.binary @fastnn_kernels [#gpu.object<#nvvm.target<...>, "...">]
    func.func @fnn_model_run(%arena: !llvm.ptr) {
      gpu.launch_func @fastnn_kernels::@fnn_model_run_kernel0
          blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
          args(%arena : !llvm.ptr)
      return
    }
    ```
    After:
    ```mlir
    llvm.mlir.global internal constant @fnn_model_gpu_image("...")
    func.func @fnn_model_run(%arena: !llvm.ptr) {
      %params = llvm.alloca %c1 x !llvm.array<1 x ptr> : (i64) -> !llvm.ptr
      %slot = llvm.alloca %c1 x !llvm.ptr : (i64) -> !llvm.ptr
      llvm.store %arena, %slot : !llvm.ptr, !llvm.ptr
      llvm.store %slot, %params : !llvm.ptr, !llvm.ptr
      %kernel = llvm.load <@fnn_model_gpu_functions[1]> : !llvm.ptr -> !llvm.ptr
      llvm.call @fnn_gpu_launch(%kernel, %c1_i64, %c32_i64, %params) : ...
      return
    }
    ```
  }];
  let options = [
    Option<"symbolPrefix", "symbol-prefix", "std::string",
           /*default=*/"\"fnn_model\"",
           "Prefix of the lowered step's symbols (<prefix>_init, "
           "<prefix>_release), as fastnn-lower-to-runtime was given">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::cf::ControlFlowDialect"];
}

def FastNNEmulateGpuKernels : Pass<"fastnn-emulate-gpu-kernels",
                                   "mlir::ModuleOp"> {
  let summary = "Run the outlined CUDA kernels as host loops over their "
                "grid, to test the CUDA lowering without a GPU";
  let description = [{
    A test aid (`fastnnc --target=cuda --emulate-gpu-kernels`), run instead
    of the kernels' compilation, right after `fastnn-outline-gpu-kernels`.
    Each `gpu.launch_func` becomes an `scf.parallel` over its blocks and
    threads whose body is the kernel's, with `gpu.block_id x` and
    `gpu.thread_id x` the loop's induction variables and the kernel's
    arguments the launch's operands; the `gpu.module` goes. What remains is
    what the CPU lowering takes, so the step links with the CPU runtime and
    runs each generated kernel's index arithmetic, guard and body exactly as
    the GPU's threads would, one point per thread. Losses of such a
    train.bin equal a `--target=cpu` one's up to summation order, which is
    what `zoo.cuda-emulated.*` checks.

    Before:
    ```mlir
    gpu.module @fastnn_kernels {
      gpu.func @k(%arena: !llvm.ptr) kernel {
        %b = gpu.block_id x
        %t = gpu.thread_id x
        ...
        gpu.return
      }
    }
    func.func @fnn_model_run(%arena: !llvm.ptr) {
      gpu.launch_func @fastnn_kernels::@k blocks in (%c4, %c1, %c1)
          threads in (%c256, %c1, %c1) args(%arena : !llvm.ptr)
      return
    }
    ```
    After:
    ```mlir
    func.func @fnn_model_run(%arena: !llvm.ptr) {
      scf.parallel (%b, %t) = (%c0, %c0) to (%c4, %c256) step (%c1, %c1) {
        ...
      }
      return
    }
    ```
  }];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def FastNNVerifyCUDALowered : Pass<"fastnn-verify-cuda-lowered",
                                   "mlir::ModuleOp"> {
  let summary = "Check that a module is what the CUDA target's object "
                "emitter accepts";
  let description = [{
    The last pass of `fastnn-cuda-lowering`, the CUDA counterpart of
    `fastnn-verify-cpu-lowered`, with the same checks (LLVM dialect ops
    only, every `fnn_` function declared is one abi.h declares: the kernels
    are embedded as a constant by then) and one more: no call of
    `fnn_parallel_for`, the host loop bodies the CUDA runtime does not run
    (its arena is device memory).

    Rejected:
    ```mlir
    llvm.func @fnn_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64)
    gpu.binary @fastnn_kernels [...]   // not embedded yet
    ```
  }];
}

#endif // FASTNN_CONVERSION_PASSES_TD
