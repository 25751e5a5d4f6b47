//===- FastNNLoopOps.td - loop sinking ----------------------*- tablegen -*-===//
//
// Ops that fastnn-sink-loop introduces: the training step as the body of a
// compiled loop of N iterations (iterations_per_loop), which fetches each
// iteration's batch itself.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_DIALECT_FASTNN_IR_FASTNNLOOPOPS_TD
#define FASTNN_DIALECT_FASTNN_IR_FASTNNLOOPOPS_TD

def FastNN_LoopOp : FastNN_Op<"loop", [RecursiveMemoryEffects]> {
  let summary = "runs its body a fixed number of times, stacking its results";
  let description = [{
    The body is one block whose argument is the iteration index (a scalar
    i64 tensor, 0-based); it ends with `fastnn.loop_yield` of scalars. Result
    k is the k-th yielded value of every iteration, stacked: a tensor of
    `iterations` elements. The body's effects (parameter updates, input
    fetches) happen once per iteration, in order; values defined outside the
    body are the same in every iteration.

    ```mlir
    %losses = fastnn.loop 8 iterations {
    ^bb0(%i: tensor<i64>):
      ...
      fastnn.loop_yield %loss : tensor<f32>
    } : tensor<8xf32>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntPositive]>:$iterations);
  let results = (outs Variadic<FastNN_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $iterations `iterations` attr-dict-with-keyword $body `:` type($results)
  }];
  let hasVerifier = 1;
}

def FastNN_LoopYieldOp : FastNN_Op<"loop_yield", [Pure, Terminator,
    HasParent<"LoopOp">]> {
  let summary = "the values of one iteration of fastnn.loop";
  let arguments = (ins Variadic<FastNN_Tensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def FastNN_NextBatchOp : FastNN_Op<"next_batch", [
    MemoryEffects<[MemRead, MemWrite]>, FastNN_ResultsAliasOperands,
    AllTypesMatch<["images", "next_images"]>,
    AllTypesMatch<["labels", "next_labels"]>]> {
  let summary = "the next batch of the input, in the step's input buffers";
  let description = [{
    Fetches the next batch from the runtime's input source (the trainer's
    prefetching pipeline, through `fnn_input_next` of runtime/.../abi.h)
    into the buffers of `images` and `labels`, the step function's inputs
    of those names, and returns it. Each execution fetches a new batch.

    ```mlir
    %x, %y = fastnn.next_batch %images, %labels : tensor<64x1x28x28xf32>, tensor<64xi64>
    ```
  }];
  let arguments = (ins FastNN_Tensor:$images, FastNN_Tensor:$labels);
  let results = (outs FastNN_Tensor:$next_images, FastNN_Tensor:$next_labels);
  let assemblyFormat = [{
    $images `,` $labels attr-dict `:` type($images) `,` type($labels)
  }];
  let hasVerifier = 1;
}

#endif // FASTNN_DIALECT_FASTNN_IR_FASTNNLOOPOPS_TD
