// RUN: fastnnc-opt %s -fastnn-mixed-precision=precision=bf16 -split-input-file | FileCheck %s
// RUN: fastnnc-opt %s -fastnn-mixed-precision=precision=fp16 -split-input-file | FileCheck %s --check-prefix=F16
// RUN: fastnnc-opt %s -fastnn-mixed-precision=precision=fp32 -split-input-file | FileCheck %s --check-prefix=F32

// A forward chain: the images and the weight are cast once, conv, relu and
// pooling run in bf16 with no cast between them, and the f32 result is one
// widening cast at the end. The weight stays an f32 parameter.

// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x8x8xf32>
// CHECK-SAME: -> tensor<2x4x3x3xf32>
// CHECK-NEXT: %[[X16:.*]] = fastnn.cast %[[X]] {to = bf16} : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xbf16>
// CHECK-NEXT: %[[W:.*]] = fastnn.param @w : tensor<4x3x3x3xf32>
// CHECK-NEXT: %[[W16:.*]] = fastnn.cast %[[W]] {to = bf16}
// CHECK-NEXT: %[[C:.*]] = fastnn.conv2d %[[X16]], %[[W16]] {{.*}} -> tensor<2x4x6x6xbf16>
// CHECK-NEXT: %[[R:.*]] = fastnn.relu %[[C]] : tensor<2x4x6x6xbf16>
// CHECK-NEXT: %[[P:.*]] = fastnn.max_pool2d %[[R]] {{.*}} : tensor<2x4x6x6xbf16> -> tensor<2x4x3x3xbf16>
// CHECK-NEXT: %[[P32:.*]] = fastnn.cast %[[P]] {to = f32} : tensor<2x4x3x3xbf16> -> tensor<2x4x3x3xf32>
// CHECK-NEXT: return %[[P32]]

// F16-LABEL: func.func @chain(
// F16: fastnn.conv2d {{.*}} -> tensor<2x4x6x6xf16>
// F16: fastnn.relu {{.*}} : tensor<2x4x6x6xf16>

// F32-LABEL: func.func @chain(
// F32-NOT: fastnn.cast
// F32: return
fastnn.parameter @w trainable = dense<0.1> : tensor<4x3x3x3xf32>
func.func @chain(%x: tensor<2x3x8x8xf32>) -> tensor<2x4x3x3xf32> {
  %w = fastnn.param @w : tensor<4x3x3x3xf32>
  %c = fastnn.conv2d %x, %w : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  %r = fastnn.relu %c : tensor<2x4x6x6xf32>
  %p = fastnn.max_pool2d %r {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x6x6xf32> -> tensor<2x4x3x3xf32>
  return %p : tensor<2x4x3x3xf32>
}

// -----

// One f32 value read by two low ops is cast once; a widened value read by
// a low op is read in bf16 directly (no cast pair); an op whose inputs are
// not all low (the add with an f32 argument) stays f32.

// CHECK-LABEL: func.func @shared(
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<8x8xf32>, %[[Z:[^:]*]]: tensor<4x8xf32>
// CHECK-COUNT-1: fastnn.cast %[[B]] {to = bf16}
// CHECK-NOT: fastnn.cast %[[B]]
// CHECK: %[[M1:.*]] = fastnn.matmul {{.*}} -> tensor<4x8xbf16>
// CHECK-NOT: fastnn.cast %[[M1]] {to = f32}
// CHECK: %[[M2:.*]] = fastnn.matmul %[[M1]], {{.*}} -> tensor<4x8xbf16>
// CHECK: %[[W2:.*]] = fastnn.cast %[[M2]] {to = f32}
// CHECK: fastnn.add %[[W2]], %[[Z]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @shared(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m1 = fastnn.matmul %a, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %m2 = fastnn.matmul %m1, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = fastnn.add %m2, %z : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// The training step: batch norm normalises bf16 activations with f32
// scale, bias and statistics (their updates stay f32), the logits are
// widened before log_softmax, and the optimizer updates the f32 master
// weights from the bf16 weight gradient, which it widens as it reads (no
// f32 copy); in fp16 the gradient is widened first.

// CHECK-LABEL: func.func @train_step(
// CHECK: %[[W:.*]] = fastnn.param @w : tensor<4x1x3x3xf32>
// CHECK: %[[W16:.*]] = fastnn.cast %[[W]] {to = bf16}
// CHECK: %[[C:.*]] = fastnn.conv2d %{{.*}}, %[[W16]] {{.*}} -> tensor<2x4x4x4xbf16>
// CHECK: %[[Y:.*]], %[[MEAN:.*]], %[[VAR:.*]] = fastnn.batch_norm_train %[[C]], %{{.*}}, %{{.*}} {{.*}} : (tensor<2x4x4x4xbf16>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x4x4xbf16>, tensor<4xf32>, tensor<4xf32>)
// CHECK: fastnn.mul %[[MEAN]], %{{.*}} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: %[[R:.*]] = fastnn.relu %[[Y]] : tensor<2x4x4x4xbf16>
// CHECK: %[[LOGITS:.*]] = fastnn.matmul {{.*}} -> tensor<2x10xbf16>
// CHECK: %[[LOGITS32:.*]] = fastnn.cast %[[LOGITS]] {to = f32}
// CHECK: fastnn.log_softmax %[[LOGITS32]] {axis = 1 : i64} : tensor<2x10xf32>
// CHECK: fastnn.relu_backward %[[R]], %{{.*}} : tensor<2x4x4x4xbf16>
// CHECK: fastnn.batch_norm_backward %[[C]], {{.*}} : (tensor<2x4x4x4xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x4x4xbf16>) -> (tensor<2x4x4x4xbf16>, tensor<4xf32>, tensor<4xf32>)
// CHECK: %{{.*}}, %[[DW:.*]], %{{.*}} = fastnn.conv2d_backward %{{.*}}, %[[W16]], %{{.*}} : (tensor<2x1x4x4xbf16>, tensor<4x1x3x3xbf16>, tensor<2x4x4x4xbf16>)
// CHECK-NOT: fastnn.cast %[[DW]]
// CHECK: fastnn.update_state %{{.*}} into %{{.*}} : tensor<4xf32>
// CHECK: fastnn.apply_optimizer sgd %[[W]], %[[DW]], {{.*}} : (tensor<4x1x3x3xf32>, tensor<4x1x3x3xbf16>
// F16-LABEL: func.func @train_step(
// F16: %{{.*}}, %[[DW:.*]], %{{.*}} = fastnn.conv2d_backward
// F16: %[[DW32:.*]] = fastnn.cast %[[DW]] {to = f32} : tensor<4x1x3x3xf16> -> tensor<4x1x3x3xf32>
// F16: fastnn.apply_optimizer sgd %{{.*}}, %[[DW32]], {{.*}} : (tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>
fastnn.parameter @w trainable = dense<0.1> : tensor<4x1x3x3xf32>
fastnn.parameter @s trainable = dense<1.0> : tensor<4xf32>
fastnn.parameter @b trainable = dense<0.0> : tensor<4xf32>
fastnn.parameter @m statistic = dense<0.0> : tensor<4xf32>
fastnn.parameter @fc trainable = dense<0.01> : tensor<10x64xf32>
func.func @train_step(%x: tensor<2x1x4x4xf32>, %labels: tensor<2xi64>, %lr: tensor<f32>, %step: tensor<i64>) -> tensor<f32> {
  %w = fastnn.param @w : tensor<4x1x3x3xf32>
  %s = fastnn.param @s : tensor<4xf32>
  %b = fastnn.param @b : tensor<4xf32>
  %m = fastnn.param @m : tensor<4xf32>
  %fc = fastnn.param @fc : tensor<10x64xf32>
  %c = fastnn.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x1x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x4x4xf32>
  %y, %mean, %var = fastnn.batch_norm_train %c, %s, %b {epsilon = 1.0e-3 : f64} : (tensor<2x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>)
  %k = fastnn.constant dense<0.9> : tensor<f32>
  %newm = fastnn.mul %mean, %k : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %r = fastnn.relu %y : tensor<2x4x4x4xf32>
  %f = fastnn.reshape %r : tensor<2x4x4x4xf32> -> tensor<2x64xf32>
  %l = fastnn.matmul %f, %fc {transpose_b} : (tensor<2x64xf32>, tensor<10x64xf32>) -> tensor<2x10xf32>
  %p = fastnn.log_softmax %l {axis = 1 : i64} : tensor<2x10xf32>
  %gl = fastnn.exp %p : tensor<2x10xf32>
  %gf = fastnn.matmul %gl, %fc : (tensor<2x10xf32>, tensor<10x64xf32>) -> tensor<2x64xf32>
  %gr = fastnn.reshape %gf : tensor<2x64xf32> -> tensor<2x4x4x4xf32>
  %gy = fastnn.relu_backward %r, %gr : tensor<2x4x4x4xf32>
  %gc, %gs, %gb = fastnn.batch_norm_backward %c, %s, %mean, %var, %gy {epsilon = 1.0e-3 : f64} : (tensor<2x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x4x4xf32>) -> (tensor<2x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>)
  %gx, %gw, %gbias = fastnn.conv2d_backward %x, %w, %gc {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x1x4x4xf32>, tensor<4x1x3x3xf32>, tensor<2x4x4x4xf32>) -> (tensor<2x1x4x4xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>)
  fastnn.update_state %newm into %m : tensor<4xf32>
  fastnn.apply_optimizer sgd %w, %gw, %lr, %step : (tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>, tensor<f32>, tensor<i64>) -> ()
  %loss = fastnn.reduce_sum %p {axes = array<i64: 0, 1>} : tensor<2x10xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Max pooling's gradient takes its forward's type (it reads the forward
// kernel's saved argmax).

// CHECK-LABEL: func.func @pool_backward(
// CHECK: %[[G16:.*]] = fastnn.cast %{{.*}} {to = bf16} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xbf16>
// CHECK: %[[P:.*]] = fastnn.max_pool2d %{{.*}} : tensor<1x2x4x4xbf16> -> tensor<1x2x2x2xbf16>
// CHECK: %[[D:.*]] = fastnn.pool2d_backward %[[P]], %[[G16]] : (tensor<1x2x2x2xbf16>, tensor<1x2x2x2xbf16>) -> tensor<1x2x4x4xbf16>
// CHECK: fastnn.cast %[[D]] {to = f32}
func.func @pool_backward(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %g: tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>) {
  %c = fastnn.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %p = fastnn.max_pool2d %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  %d = fastnn.pool2d_backward %p, %g : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
  return %p, %d : tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>
}

// -----

// A gradient widened from the low type and then only scaled and shifted by
// values every worker shares (the loss scale's factor, a parameter's weight
// decay) is averaged over the workers in the low type: the allreduce moves
// onto the low value right where it is complete, and the f32 steps repeat
// on its mean right before its first reader (the return). A gradient that also depends on a
// worker's own input (%x) stays an f32 mean.

// CHECK-LABEL: func.func @low_means(
// CHECK: %[[G:.*]] = fastnn.matmul {{.*}} -> tensor<4x8xbf16>
// CHECK-NEXT: %[[M:.*]] = fastnn.allreduce mean %[[G]] : tensor<4x8xbf16>
// CHECK: %[[X:.*]] = fastnn.allreduce mean %{{.*}} : tensor<4x8xf32>
// CHECK-NEXT: %[[M32:.*]] = fastnn.cast %[[M]] {to = f32} : tensor<4x8xbf16> -> tensor<4x8xf32>
// CHECK-NEXT: %[[MS:.*]] = fastnn.mul %[[M32]], %{{.*}} : (tensor<4x8xf32>, tensor<f32>)
// CHECK-NEXT: %[[R:.*]] = fastnn.add %[[MS]], %{{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: return %[[R]], %[[X]]

// F16-LABEL: func.func @low_means(
// F16: fastnn.allreduce mean %{{.*}} : tensor<4x8xf16>

// F32-LABEL: func.func @low_means(
// F32-COUNT-2: fastnn.allreduce mean %{{.*}} : tensor<4x8xf32>
fastnn.parameter @w trainable = dense<0.1> : tensor<4x8xf32>
fastnn.parameter @scale slot = dense<1.0> : tensor<f32>
func.func @low_means(%a: tensor<2x4xf32>, %b: tensor<2x8xf32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = fastnn.param @w : tensor<4x8xf32>
  %s = fastnn.param @scale : tensor<f32>
  %one = fastnn.constant dense<1.0> : tensor<f32>
  %inv = fastnn.div %one, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %decay = fastnn.constant dense<1.0e-4> : tensor<f32>
  %g = fastnn.matmul %a, %b {transpose_a} : (tensor<2x4xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %gs = fastnn.mul %g, %inv : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %wd = fastnn.mul %w, %decay : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %grad = fastnn.add %gs, %wd : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %mean = fastnn.allreduce mean %grad : tensor<4x8xf32>
  %gx = fastnn.add %gs, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %meanx = fastnn.allreduce mean %gx : tensor<4x8xf32>
  return %mean, %meanx : tensor<4x8xf32>, tensor<4x8xf32>
}
