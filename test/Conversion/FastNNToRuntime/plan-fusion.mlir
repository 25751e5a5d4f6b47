// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -split-input-file | FileCheck %s
// RUN: fastnnc-opt %s -fastnn-plan-fusion -split-input-file | FileCheck %s --check-prefix=KERNELS

// A relu that only reads a convolution is its post-op.

// CHECK-LABEL: func.func @conv_relu
// CHECK: fastnn.conv2d {{.*}} {fastnn.post_op = "relu"}
// CHECK-NEXT: fastnn.relu {{.*}} {fastnn.fused_into_producer}
fastnn.parameter @w trainable = dense<1.0> : tensor<2x1x1x1xf32>
func.func @conv_relu(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = fastnn.param @w : tensor<2x1x1x1xf32>
  %c = fastnn.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %r = fastnn.relu %c : tensor<1x2x2x2xf32>
  return %r : tensor<1x2x2x2xf32>
}

// -----

// So does training batch norm's: the relu's gradient reads the relu's
// result, the batch norm's buffer, and the batch norm's gradient reads only
// its input.

// CHECK-LABEL: func.func @batch_norm_train_relu
// CHECK: fastnn.batch_norm_train {{.*}} {fastnn.post_op = "relu", layout = #fastnn.layout<nhwc>}
// CHECK-NEXT: fastnn.relu {{.*}} {fastnn.fused_into_producer}
// CHECK-NEXT: fastnn.relu_backward
// CHECK-NOT: fastnn.post_op
// CHECK: return
func.func @batch_norm_train_relu(%x: tensor<2x2x2x3xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %dr: tensor<2x2x2x3xf32>) -> (tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>) {
  %y, %m, %v = fastnn.batch_norm_train %x, %s, %b {layout = #fastnn.layout<nhwc>} : (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %r = fastnn.relu %y : tensor<2x2x2x3xf32>
  %dy = fastnn.relu_backward %r, %dr : tensor<2x2x2x3xf32>
  %dx, %ds, %db = fastnn.batch_norm_backward %x, %s, %m, %v, %dy {layout = #fastnn.layout<nhwc>} : (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x2x2x3xf32>) -> (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %r, %dx : tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>
}

// -----

// And a relu6 (a clip 0..6, whose gradient reads the clip's output).

// CHECK-LABEL: func.func @batch_norm_train_relu6
// CHECK: fastnn.batch_norm_train {{.*}} {fastnn.post_op = "relu6", layout = #fastnn.layout<nhwc>}
// CHECK-NEXT: fastnn.clip {{.*}} {fastnn.fused_into_producer, max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
func.func @batch_norm_train_relu6(%x: tensor<2x2x2x3xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %dr: tensor<2x2x2x3xf32>) -> (tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>) {
  %y, %m, %v = fastnn.batch_norm_train %x, %s, %b {layout = #fastnn.layout<nhwc>} : (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %r = fastnn.clip %y {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x2x2x3xf32>
  %dy = fastnn.clip_backward %r, %dr {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x2x2x3xf32>
  %dx, %ds, %db = fastnn.batch_norm_backward %x, %s, %m, %v, %dy {layout = #fastnn.layout<nhwc>} : (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x2x2x3xf32>) -> (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %r, %dx : tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>
}

// -----

// A residual add reading a training batch norm's result, its other operand
// computed before the batch norm (and still read later: the backward's
// residual), is the batch norm's; a relu after it its post-op.

// CHECK-LABEL: func.func @batch_norm_train_residual
// CHECK: fastnn.batch_norm_train {{.*}} {fastnn.post_op = "relu", fastnn.residual_fused, layout = #fastnn.layout<nhwc>}
// CHECK-NEXT: fastnn.add {{.*}} {fastnn.fused_into_producer}
// CHECK-NEXT: fastnn.relu {{.*}} {fastnn.fused_into_producer}
func.func @batch_norm_train_residual(%x: tensor<2x2x2x3xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %shortcut: tensor<2x2x2x3xf32>) -> (tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>) {
  %r = fastnn.relu %shortcut : tensor<2x2x2x3xf32>
  %y, %m, %v = fastnn.batch_norm_train %x, %s, %b {layout = #fastnn.layout<nhwc>} : (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %a = fastnn.add %y, %r : (tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>) -> tensor<2x2x2x3xf32>
  %o = fastnn.relu %a : tensor<2x2x2x3xf32>
  return %o, %r : tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>
}

// -----

// Not when the residual is computed after the batch norm, nor when the
// batch norm's result has another reader.

// CHECK-LABEL: func.func @batch_norm_train_residual_unfused
// CHECK-NOT: fastnn.residual_fused
// CHECK-NOT: fastnn.fused_into_producer
// CHECK: return
func.func @batch_norm_train_residual_unfused(%x: tensor<2x2x2x3xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %shortcut: tensor<2x2x2x3xf32>) -> (tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>) {
  %y, %m, %v = fastnn.batch_norm_train %x, %s, %b {layout = #fastnn.layout<nhwc>} : (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %late = fastnn.mul %shortcut, %shortcut : (tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>) -> tensor<2x2x2x3xf32>
  %a = fastnn.add %y, %late : (tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>) -> tensor<2x2x2x3xf32>
  %y2, %m2, %v2 = fastnn.batch_norm_train %x, %s, %b {layout = #fastnn.layout<nhwc>} : (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %a2 = fastnn.add %y2, %shortcut : (tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>) -> tensor<2x2x2x3xf32>
  return %a, %a2, %y2 : tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>
}

// -----

// Not when the convolution's result has another reader.

// CHECK-LABEL: func.func @conv_used_twice
// CHECK-NOT: fastnn.post_op
// CHECK-NOT: fastnn.fused_into_producer
// CHECK: return
fastnn.parameter @w trainable = dense<1.0> : tensor<2x1x1x1xf32>
func.func @conv_used_twice(%x: tensor<1x1x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = fastnn.param @w : tensor<2x1x1x1xf32>
  %c = fastnn.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %r = fastnn.relu %c : tensor<1x2x2x2xf32>
  return %c, %r : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// A vector add after a matmul is its bias (on either side), and a relu
// after that its post-op: one kernel call for all three.

// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK: fastnn.matmul {{.*}} {fastnn.bias_fused, fastnn.post_op = "relu"}
// CHECK-NEXT: fastnn.add {{.*}} {fastnn.fused_into_producer}
// CHECK-NEXT: fastnn.relu {{.*}} {fastnn.fused_into_producer}
func.func @matmul_bias_relu(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %bias: tensor<4xf32>) -> tensor<2x4xf32> {
  %m = fastnn.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %s = fastnn.add %bias, %m : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = fastnn.relu %s : tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// Batch norm's kernel takes the relu too (the AcceptsPostOp trait).

// CHECK-LABEL: func.func @batch_norm_relu
// CHECK: fastnn.batch_norm {{.*}} {epsilon = {{.*}}, fastnn.post_op = "relu"}
// CHECK-NEXT: fastnn.relu {{.*}} {fastnn.fused_into_producer}
func.func @batch_norm_relu(%x: tensor<1x3x2x2xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<1x3x2x2xf32> {
  %y = fastnn.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-3 : f64} : (tensor<1x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32>
  %r = fastnn.relu %y : tensor<1x3x2x2xf32>
  return %r : tensor<1x3x2x2xf32>
}

// -----

// A kernel without the trait (pooling) keeps its relu as a loop.

// CHECK-LABEL: func.func @pool_relu
// CHECK-NOT: fastnn.post_op
// CHECK-NOT: fastnn.fused_into_producer
// CHECK: return
func.func @pool_relu(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %p = fastnn.max_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  %r = fastnn.relu %p : tensor<1x2x3x3xf32>
  return %r : tensor<1x2x3x3xf32>
}

// -----

// A bias computed after the matmul is not fused (the kernel reads it when
// it runs); the add is then an elementwise op like any other.

// CHECK-LABEL: func.func @late_bias
// CHECK-NOT: fastnn.bias_fused
// CHECK: return
func.func @late_bias(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %v: tensor<4xf32>) -> tensor<2x4xf32> {
  %m = fastnn.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %bias = fastnn.exp %v : tensor<4xf32>
  %s = fastnn.add %m, %bias : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

// An elementwise chain of one shape runs in its last op's loop nest.

// CHECK-LABEL: func.func @chain
// CHECK: fastnn.exp {{.*}} {fastnn.inline_into_consumer}
// CHECK-NEXT: fastnn.neg {{.*}} {fastnn.inline_into_consumer}
// CHECK-NEXT: fastnn.sqrt
// CHECK-NOT: fastnn.inline_into_consumer
// CHECK-SAME: tensor<2x1024xf32>
func.func @chain(%x: tensor<2x1024xf32>) -> tensor<2x1024xf32> {
  %a = fastnn.exp %x : tensor<2x1024xf32>
  %b = fastnn.neg %a : tensor<2x1024xf32>
  %c = fastnn.sqrt %b : tensor<2x1024xf32>
  return %c : tensor<2x1024xf32>
}

// -----

// A transpose read once by an elementwise op of its shape (a filter's
// NCHW -> NHWC transpose and its cast to bf16) runs in that op's nest.

// CHECK-LABEL: func.func @transpose_then_cast
// CHECK: fastnn.transpose {{.*}} {fastnn.inline_into_consumer
// CHECK-NEXT: fastnn.cast
// CHECK-NOT: fastnn.inline_into_consumer
// CHECK-SAME: tensor<8x3x3x4xbf16>
func.func @transpose_then_cast(%w: tensor<8x4x3x3xf32>) -> tensor<8x3x3x4xbf16> {
  %t = fastnn.transpose %w {permutation = array<i64: 0, 2, 3, 1>} : tensor<8x4x3x3xf32> -> tensor<8x3x3x4xf32>
  %c = fastnn.cast %t {to = bf16} : tensor<8x3x3x4xf32> -> tensor<8x3x3x4xbf16>
  return %c : tensor<8x3x3x4xbf16>
}

// -----

// Not inlined: a result its user broadcasts, and the producer of an op that
// reads a collective's result (it overlaps the communication).

// CHECK-LABEL: func.func @not_inlined
// CHECK-NOT: fastnn.inline_into_consumer
// CHECK: return
func.func @not_inlined(%x: tensor<2x3xf32>, %v: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>) {
  %e = fastnn.exp %v : tensor<3xf32>
  %s = fastnn.add %x, %e : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %g = fastnn.neg %v : tensor<3xf32>
  %m = fastnn.allreduce mean %v : tensor<3xf32>
  %t = fastnn.add %g, %m : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %s, %t : tensor<2x3xf32>, tensor<3xf32>
}

// -----

// f32 reductions of at most max-loop-reduction elements per output element
// are loops; larger ones and half-precision ones are kernels. Without the
// option every reduction is a kernel.

// CHECK-LABEL: func.func @reductions
// CHECK: fastnn.reduce_sum {{.*}}fastnn.codegen = "loops"
// CHECK: fastnn.reduce_mean {{.*}}fastnn.codegen = "kernel"
// CHECK: fastnn.reduce_max {{.*}}fastnn.codegen = "kernel"
// KERNELS-LABEL: func.func @reductions
// KERNELS: fastnn.reduce_sum {{.*}}fastnn.codegen = "kernel"
// KERNELS: fastnn.reduce_mean {{.*}}fastnn.codegen = "kernel"
// KERNELS: fastnn.reduce_max {{.*}}fastnn.codegen = "kernel"
func.func @reductions(%x: tensor<8x4096xf32>, %y: tensor<8x4097xf32>, %h: tensor<8x16xf16>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf16>) {
  %a = fastnn.reduce_sum %x {axes = array<i64: 1>} : tensor<8x4096xf32> -> tensor<8xf32>
  %b = fastnn.reduce_mean %y {axes = array<i64: 1>} : tensor<8x4097xf32> -> tensor<8xf32>
  %c = fastnn.reduce_max %h {axes = array<i64: 1>} : tensor<8x16xf16> -> tensor<8xf16>
  return %a, %b, %c : tensor<8xf32>, tensor<8xf32>, tensor<8xf16>
}

// -----

// A residual add: the second convolution accumulates into the first's
// buffer (nothing else reads it), and the relu after the add is its
// activation. The add and the relu take neither memory nor code.

// CHECK-LABEL: func.func @residual_add_relu
// CHECK: %[[A:.*]] = fastnn.conv2d %{{.*}}, %{{.*}} : (
// CHECK-NEXT: %[[B:.*]] = fastnn.conv2d {{.*}} {fastnn.accumulate, fastnn.post_op = "relu"}
// CHECK-NEXT: fastnn.add %[[B]], %[[A]] {fastnn.fused_into_producer}
// CHECK-NEXT: fastnn.relu {{.*}} {fastnn.fused_into_producer}
fastnn.parameter @w1 trainable = dense<1.0> : tensor<2x1x1x1xf32>
fastnn.parameter @w2 trainable = dense<2.0> : tensor<2x1x1x1xf32>
func.func @residual_add_relu(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w1 = fastnn.param @w1 : tensor<2x1x1x1xf32>
  %w2 = fastnn.param @w2 : tensor<2x1x1x1xf32>
  %a = fastnn.conv2d %x, %w1 : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %b = fastnn.conv2d %x, %w2 : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %s = fastnn.add %b, %a : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %r = fastnn.relu %s : tensor<1x2x2x2xf32>
  return %r : tensor<1x2x2x2xf32>
}

// -----

// An addend computed after the convolution from values available before it
// (ResNet v1's subsampled shortcut) moves before the convolution, which
// then accumulates into it; relu6 after the add is the activation.

// CHECK-LABEL: func.func @addend_moved_first
// CHECK: %[[P:.*]] = fastnn.max_pool2d
// CHECK-NEXT: %[[C:.*]] = fastnn.conv2d {{.*}} {fastnn.accumulate, fastnn.post_op = "relu6",
// CHECK-NEXT: fastnn.add %[[C]], %[[P]] {fastnn.fused_into_producer}
// CHECK-NEXT: fastnn.clip {{.*}}fastnn.fused_into_producer
fastnn.parameter @w trainable = dense<1.0> : tensor<2x2x1x1xf32>
func.func @addend_moved_first(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %w = fastnn.param @w : tensor<2x2x1x1xf32>
  %c = fastnn.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %p = fastnn.max_pool2d %x {kernel_shape = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  %s = fastnn.add %c, %p : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %r = fastnn.clip %s {min = 0.0 : f64, max = 6.0 : f64} : tensor<1x2x2x2xf32>
  return %r : tensor<1x2x2x2xf32>
}

// -----

// No accumulation into an addend read later (here returned), into a step
// input, into a value computed from parameters alone (an inference step
// computes it once, and its buffer lives on), or into the convolution's
// own input; those adds stay elementwise ops.

// CHECK-LABEL: func.func @addends_not_overwritten
// CHECK-NOT: fastnn.accumulate
// CHECK-NOT: fastnn.fused_into_producer
// CHECK: return
fastnn.parameter @w1 trainable = dense<1.0> : tensor<2x1x1x1xf32>
fastnn.parameter @w2 trainable = dense<2.0> : tensor<2x2x1x1xf32>
fastnn.parameter @k trainable = dense<3.0> : tensor<1x2x2x2xf32>
func.func @addends_not_overwritten(%x: tensor<1x1x2x2xf32>, %y: tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w1 = fastnn.param @w1 : tensor<2x1x1x1xf32>
  %w2 = fastnn.param @w2 : tensor<2x2x1x1xf32>
  %k = fastnn.param @k : tensor<1x2x2x2xf32>
  %a = fastnn.conv2d %x, %w1 : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %b = fastnn.conv2d %x, %w1 : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %s = fastnn.add %b, %a : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = fastnn.conv2d %x, %w1 : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %t = fastnn.add %c, %y : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %kr = fastnn.relu %k : tensor<1x2x2x2xf32>
  %d = fastnn.conv2d %x, %w1 : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %u = fastnn.add %d, %kr : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %e = fastnn.sigmoid %y : tensor<1x2x2x2xf32>
  %f = fastnn.conv2d %e, %w2 : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %v = fastnn.add %f, %e : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %s, %a, %t, %u, %v : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// relu6 is a post-op of convolutions only (the batch norm and matmul
// kernels fuse a relu at most); other clips are not post-ops.

// CHECK-LABEL: func.func @relu6_convolutions_only
// CHECK: fastnn.conv2d {{.*}} {fastnn.post_op = "relu6"}
// CHECK-NEXT: fastnn.clip {{.*}}fastnn.fused_into_producer
// CHECK-NEXT: fastnn.conv2d %{{.*}}, %{{.*}} : (
// CHECK-NEXT: fastnn.clip %{{[^{]*}} {max = 5.000000e+00 : f64, min = 0.000000e+00 : f64}
// CHECK-NEXT: fastnn.batch_norm {{.*}} {epsilon = {{[^,]*}}}
// CHECK-NEXT: fastnn.clip %{{[^{]*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
fastnn.parameter @w trainable = dense<1.0> : tensor<3x3x1x1xf32>
func.func @relu6_convolutions_only(%x: tensor<1x3x2x2xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>) {
  %w = fastnn.param @w : tensor<3x3x1x1xf32>
  %c = fastnn.conv2d %x, %w : (tensor<1x3x2x2xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x2x2xf32>
  %r = fastnn.clip %c {min = 0.0 : f64, max = 6.0 : f64} : tensor<1x3x2x2xf32>
  %d = fastnn.conv2d %x, %w : (tensor<1x3x2x2xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x2x2xf32>
  %q = fastnn.clip %d {min = 0.0 : f64, max = 5.0 : f64} : tensor<1x3x2x2xf32>
  %y = fastnn.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-3 : f64} : (tensor<1x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32>
  %t = fastnn.clip %y {min = 0.0 : f64, max = 6.0 : f64} : tensor<1x3x2x2xf32>
  return %r, %q, %t : tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>
}

// -----

// A pointwise convolution that only a depthwise convolution reads, through
// its relu6, is computed by it (MobileNet's expansion), and so is that
// depthwise convolution by the projection that alone reads it; each keeps
// its activation, and the projection its residual add.

// CHECK-LABEL: func.func @inverted_residual
// CHECK: fastnn.conv2d {{.*}}fastnn.chained_into_consumer, fastnn.post_op = "relu6"
// CHECK-NEXT: fastnn.clip {{.*}}fastnn.fused_into_producer
// CHECK-NEXT: fastnn.conv2d {{.*}}fastnn.chained_into_consumer, fastnn.post_op = "relu6"
// CHECK-NEXT: fastnn.clip {{.*}}fastnn.fused_into_producer
// CHECK-NEXT: fastnn.conv2d {{.*}}{fastnn.accumulate, layout
// CHECK-NEXT: fastnn.add {{.*}}fastnn.fused_into_producer
// CHECK-NOT: chained_into_consumer
// CHECK: return
fastnn.parameter @e trainable = dense<1.0> : tensor<6x1x1x2xf32>
fastnn.parameter @d trainable = dense<1.0> : tensor<6x3x3x1xf32>
fastnn.parameter @p trainable = dense<1.0> : tensor<2x1x1x6xf32>
func.func @inverted_residual(%i: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %e = fastnn.param @e : tensor<6x1x1x2xf32>
  %d = fastnn.param @d : tensor<6x3x3x1xf32>
  %p = fastnn.param @p : tensor<2x1x1x6xf32>
  %x = fastnn.neg %i : tensor<1x4x4x2xf32>
  %c = fastnn.conv2d %x, %e {layout = #fastnn.layout<nhwc>} : (tensor<1x4x4x2xf32>, tensor<6x1x1x2xf32>) -> tensor<1x4x4x6xf32>
  %r = fastnn.clip %c {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<1x4x4x6xf32>
  %w = fastnn.conv2d %r, %d {groups = 6 : i64, layout = #fastnn.layout<nhwc>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x6xf32>, tensor<6x3x3x1xf32>) -> tensor<1x4x4x6xf32>
  %s = fastnn.clip %w {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<1x4x4x6xf32>
  %y = fastnn.conv2d %s, %p {layout = #fastnn.layout<nhwc>} : (tensor<1x4x4x6xf32>, tensor<2x1x1x6xf32>) -> tensor<1x4x4x2xf32>
  %a = fastnn.add %y, %x : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %a : tensor<1x4x4x2xf32>
}

// -----

// A depthwise convolution without a projection ends its chain: only the
// pointwise convolution before it is marked.

// CHECK-LABEL: func.func @pointwise_depthwise
// CHECK: fastnn.conv2d {{.*}}fastnn.chained_into_consumer, fastnn.post_op = "relu6"
// CHECK-NEXT: fastnn.clip {{.*}}fastnn.fused_into_producer
// CHECK-NEXT: fastnn.conv2d {{.*}}fastnn.post_op = "relu6"
// CHECK-NOT: chained_into_consumer
// CHECK: return
fastnn.parameter @e trainable = dense<1.0> : tensor<6x1x1x2xf32>
fastnn.parameter @d trainable = dense<1.0> : tensor<6x3x3x1xf32>
func.func @pointwise_depthwise(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x6xf32> {
  %e = fastnn.param @e : tensor<6x1x1x2xf32>
  %d = fastnn.param @d : tensor<6x3x3x1xf32>
  %c = fastnn.conv2d %x, %e {layout = #fastnn.layout<nhwc>} : (tensor<1x4x4x2xf32>, tensor<6x1x1x2xf32>) -> tensor<1x4x4x6xf32>
  %r = fastnn.clip %c {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<1x4x4x6xf32>
  %w = fastnn.conv2d %r, %d {groups = 6 : i64, layout = #fastnn.layout<nhwc>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x4x6xf32>, tensor<6x3x3x1xf32>) -> tensor<1x2x2x6xf32>
  %s = fastnn.clip %w {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<1x2x2x6xf32>
  return %s : tensor<1x2x2x6xf32>
}

// -----

// Not when the expansion has another reader, nor when the first
// convolution is not pointwise or the second not depthwise.

// CHECK-LABEL: func.func @no_chain
// CHECK-NOT: chained_into_consumer
// CHECK: return
fastnn.parameter @e trainable = dense<1.0> : tensor<6x1x1x2xf32>
fastnn.parameter @k trainable = dense<1.0> : tensor<6x3x3x2xf32>
fastnn.parameter @d trainable = dense<1.0> : tensor<6x3x3x1xf32>
fastnn.parameter @g trainable = dense<1.0> : tensor<6x3x3x3xf32>
func.func @no_chain(%x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x6xf32>, tensor<1x4x4x6xf32>, tensor<1x4x4x6xf32>, tensor<1x4x4x6xf32>) {
  %e = fastnn.param @e : tensor<6x1x1x2xf32>
  %k = fastnn.param @k : tensor<6x3x3x2xf32>
  %d = fastnn.param @d : tensor<6x3x3x1xf32>
  %g = fastnn.param @g : tensor<6x3x3x3xf32>
  %c = fastnn.conv2d %x, %e {layout = #fastnn.layout<nhwc>} : (tensor<1x4x4x2xf32>, tensor<6x1x1x2xf32>) -> tensor<1x4x4x6xf32>
  %w = fastnn.conv2d %c, %d {groups = 6 : i64, layout = #fastnn.layout<nhwc>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x6xf32>, tensor<6x3x3x1xf32>) -> tensor<1x4x4x6xf32>
  %f = fastnn.conv2d %x, %k {layout = #fastnn.layout<nhwc>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x2xf32>, tensor<6x3x3x2xf32>) -> tensor<1x4x4x6xf32>
  %v = fastnn.conv2d %f, %d {groups = 6 : i64, layout = #fastnn.layout<nhwc>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x6xf32>, tensor<6x3x3x1xf32>) -> tensor<1x4x4x6xf32>
  %h = fastnn.conv2d %x, %e {layout = #fastnn.layout<nhwc>} : (tensor<1x4x4x2xf32>, tensor<6x1x1x2xf32>) -> tensor<1x4x4x6xf32>
  %u = fastnn.conv2d %h, %g {groups = 2 : i64, layout = #fastnn.layout<nhwc>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x6xf32>, tensor<6x3x3x3xf32>) -> tensor<1x4x4x6xf32>
  return %c, %w, %v, %u : tensor<1x4x4x6xf32>, tensor<1x4x4x6xf32>, tensor<1x4x4x6xf32>, tensor<1x4x4x6xf32>
}
