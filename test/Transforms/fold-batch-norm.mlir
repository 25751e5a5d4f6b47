// RUN: fastnnc-opt %s -fastnn-fold-batch-norm -split-input-file | FileCheck %s

// Without a convolution bias: the filter scaled per output channel, the
// bias shift - mean * a; the relu stays (the lowering fuses it into the
// convolution).

// CHECK-LABEL: func.func @no_bias(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x8x8xf32>
// CHECK-DAG: %[[W:.*]] = fastnn.param @w
// CHECK-DAG: %[[S:.*]] = fastnn.param @s
// CHECK-DAG: %[[T:.*]] = fastnn.param @t
// CHECK-DAG: %[[M:.*]] = fastnn.param @m
// CHECK-DAG: %[[V:.*]] = fastnn.param @v
// CHECK: %[[E:.*]] = fastnn.constant dense<1.000000e-03> : tensor<f32>
// CHECK: %[[VE:.*]] = fastnn.add %[[V]], %[[E]]
// CHECK: %[[SQ:.*]] = fastnn.sqrt %[[VE]]
// CHECK: %[[A:.*]] = fastnn.div %[[S]], %[[SQ]]
// CHECK: %[[AC:.*]] = fastnn.reshape %[[A]] : tensor<4xf32> -> tensor<4x1x1x1xf32>
// CHECK: %[[WF:.*]] = fastnn.mul %[[W]], %[[AC]] : (tensor<4x3x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<4x3x3x3xf32>
// CHECK: %[[MA:.*]] = fastnn.mul %[[M]], %[[A]]
// CHECK: %[[BF:.*]] = fastnn.sub %[[T]], %[[MA]]
// CHECK: %[[C:.*]] = fastnn.conv2d %[[X]], %[[WF]], %[[BF]] {pads = array<i64: 1, 1, 1, 1>}
// CHECK-NOT: batch_norm
// CHECK: %[[R:.*]] = fastnn.relu %[[C]]
// CHECK: return %[[R]]
fastnn.parameter @w trainable = dense<0.1> : tensor<4x3x3x3xf32>
fastnn.parameter @s trainable = dense<1.5> : tensor<4xf32>
fastnn.parameter @t trainable = dense<0.2> : tensor<4xf32>
fastnn.parameter @m statistic = dense<0.3> : tensor<4xf32>
fastnn.parameter @v statistic = dense<2.0> : tensor<4xf32>
func.func @no_bias(%x: tensor<2x3x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %w = fastnn.param @w : tensor<4x3x3x3xf32>
  %c = fastnn.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %s = fastnn.param @s : tensor<4xf32>
  %t = fastnn.param @t : tensor<4xf32>
  %m = fastnn.param @m : tensor<4xf32>
  %v = fastnn.param @v : tensor<4xf32>
  %n = fastnn.batch_norm %c, %s, %t, %m, %v {epsilon = 1.0e-3 : f64} : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %r = fastnn.relu %n : tensor<2x4x8x8xf32>
  return %r : tensor<2x4x8x8xf32>
}

// -----

// With a bias, NHWC (filter OHWI, O still first): (bias - mean) * a + shift.

// CHECK-LABEL: func.func @bias_nhwc(
// CHECK-DAG: %[[W:.*]] = fastnn.param @w
// CHECK-DAG: %[[B:.*]] = fastnn.param @b
// CHECK-DAG: %[[T:.*]] = fastnn.param @t
// CHECK-DAG: %[[M:.*]] = fastnn.param @m
// CHECK: %[[A:.*]] = fastnn.div
// CHECK: %[[AC:.*]] = fastnn.reshape %[[A]] : tensor<4xf32> -> tensor<4x1x1x1xf32>
// CHECK: %[[WF:.*]] = fastnn.mul %[[W]], %[[AC]] : (tensor<4x3x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<4x3x3x3xf32>
// CHECK: %[[BM:.*]] = fastnn.sub %[[B]], %[[M]]
// CHECK: %[[BA:.*]] = fastnn.mul %[[BM]], %[[A]]
// CHECK: %[[BF:.*]] = fastnn.add %[[BA]], %[[T]]
// CHECK: fastnn.conv2d %{{.*}}, %[[WF]], %[[BF]] {layout = #fastnn.layout<nhwc>}
// CHECK-NOT: batch_norm
fastnn.parameter @w trainable = dense<0.1> : tensor<4x3x3x3xf32>
fastnn.parameter @b trainable = dense<0.05> : tensor<4xf32>
fastnn.parameter @s trainable = dense<1.5> : tensor<4xf32>
fastnn.parameter @t trainable = dense<0.2> : tensor<4xf32>
fastnn.parameter @m statistic = dense<0.3> : tensor<4xf32>
fastnn.parameter @v statistic = dense<2.0> : tensor<4xf32>
func.func @bias_nhwc(%x: tensor<2x8x8x3xf32>) -> tensor<2x6x6x4xf32> {
  %w = fastnn.param @w : tensor<4x3x3x3xf32>
  %b = fastnn.param @b : tensor<4xf32>
  %s = fastnn.param @s : tensor<4xf32>
  %t = fastnn.param @t : tensor<4xf32>
  %m = fastnn.param @m : tensor<4xf32>
  %v = fastnn.param @v : tensor<4xf32>
  %c = fastnn.conv2d %x, %w, %b {layout = #fastnn.layout<nhwc>} : (tensor<2x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x6x6x4xf32>
  %n = fastnn.batch_norm %c, %s, %t, %m, %v {layout = #fastnn.layout<nhwc>} : (tensor<2x6x6x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x6x6x4xf32>
  return %n : tensor<2x6x6x4xf32>
}

// -----

// Left alone: a convolution read by another op too, a batch norm of a
// non-convolution, and one whose statistics are computed.

// CHECK-LABEL: func.func @not_folded(
// CHECK: %[[C:.*]] = fastnn.conv2d
// CHECK: fastnn.batch_norm %[[C]]
// CHECK: fastnn.batch_norm %{{.*}}
// CHECK: %[[C2:.*]] = fastnn.conv2d
// CHECK: fastnn.batch_norm %[[C2]]
fastnn.parameter @w trainable = dense<0.1> : tensor<4x4x1x1xf32>
fastnn.parameter @s trainable = dense<1.5> : tensor<4xf32>
fastnn.parameter @t trainable = dense<0.2> : tensor<4xf32>
fastnn.parameter @m statistic = dense<0.3> : tensor<4xf32>
fastnn.parameter @v statistic = dense<2.0> : tensor<4xf32>
func.func @not_folded(%x: tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) {
  %w = fastnn.param @w : tensor<4x4x1x1xf32>
  %s = fastnn.param @s : tensor<4xf32>
  %t = fastnn.param @t : tensor<4xf32>
  %m = fastnn.param @m : tensor<4xf32>
  %v = fastnn.param @v : tensor<4xf32>
  %c = fastnn.conv2d %x, %w : (tensor<2x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<2x4x8x8xf32>
  %n = fastnn.batch_norm %c, %s, %t, %m, %v : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %n2 = fastnn.batch_norm %x, %s, %t, %m, %v : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %c2 = fastnn.conv2d %x, %w : (tensor<2x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<2x4x8x8xf32>
  %m2 = fastnn.relu %m : tensor<4xf32>
  %n3 = fastnn.batch_norm %c2, %s, %t, %m2, %v : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  return %n, %c, %n2, %n3 : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>
}
