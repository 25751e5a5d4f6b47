// RUN: fastnnc-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// parameter, param, constant
//===----------------------------------------------------------------------===//

// expected-error @+1 {{expects a statically shaped tensor initial value}}
fastnn.parameter @w trainable = dense<1.0> : vector<2xf32>

// -----

// expected-error @+1 {{expects a floating-point initial value, got 'i32'}}
fastnn.parameter @w trainable = dense<1> : tensor<2xi32>

// -----

func.func @parameter_in_function() {
  // expected-error @+1 {{expects parent op 'builtin.module'}}
  fastnn.parameter @w trainable = dense<1.0> : tensor<2xf32>
  return
}

// -----

func.func @param_missing_symbol() -> tensor<2xf32> {
  // expected-error @+1 {{refers to 'w', which is not a fastnn.parameter}}
  %0 = fastnn.param @w : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @w() {
  return
}

func.func @param_of_function() -> tensor<2xf32> {
  // expected-error @+1 {{refers to 'w', which is not a fastnn.parameter}}
  %0 = fastnn.param @w : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

fastnn.parameter @w trainable = dense<1.0> : tensor<2xf32>

func.func @param_type_mismatch() -> tensor<3xf32> {
  // expected-error @+1 {{result type 'tensor<3xf32>' differs from parameter type 'tensor<2xf32>'}}
  %0 = fastnn.param @w : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @param_integer_result() -> tensor<2xi32> {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = fastnn.param @w : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @constant_type_mismatch() -> tensor<2xf32> {
  // expected-error @+1 {{failed to verify that all of {value, result} have same type}}
  %0 = "fastnn.constant"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @constant_unsupported_element_type() -> tensor<2xi4> {
  // expected-error @+1 {{result #0 must be statically shaped tensor of}}
  %0 = fastnn.constant dense<1> : tensor<2xi4>
  return %0 : tensor<2xi4>
}

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

// -----

func.func @conv2d_dynamic_input(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = fastnn.conv2d %x, %w : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  return %0 : tensor<?x4x6x6xf32>
}

// -----

func.func @conv2d_integer_input(%x: tensor<1x3x8x8xi32>, %w: tensor<4x3x3x3xi32>) -> tensor<1x4x6x6xi32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = fastnn.conv2d %x, %w : (tensor<1x3x8x8xi32>, tensor<4x3x3x3xi32>) -> tensor<1x4x6x6xi32>
  return %0 : tensor<1x4x6x6xi32>
}

// -----

func.func @conv2d_3d_input(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<4x6x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.conv2d' op expects a 4-D input, got 'tensor<3x8x8xf32>'}}
  %0 = fastnn.conv2d %x, %w : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}

// -----

func.func @conv2d_3d_filter(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects a 4-D filter, got 'tensor<4x3x3xf32>'}}
  %0 = fastnn.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_element_types(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects input and filter of one element type, got 'f32' and 'f16'}}
  %0 = fastnn.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_empty_kernel(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x0x3xf32>) -> tensor<1x4x9x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects a non-empty kernel, got 'tensor<4x3x0x3xf32>'}}
  %0 = fastnn.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x0x3xf32>) -> tensor<1x4x9x6xf32>
  return %0 : tensor<1x4x9x6xf32>
}

// -----

func.func @conv2d_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{input has 3 channels, which is not groups (1) times the filter's 2 input channels}}
  %0 = fastnn.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_groups_channels(%x: tensor<1x6x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{input has 6 channels, which is not groups (3) times the filter's 3 input channels}}
  %0 = fastnn.conv2d %x, %w {groups = 3 : i64} : (tensor<1x6x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_groups_out_channels(%x: tensor<1x6x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{output channels (4) are not divisible by groups (3)}}
  %0 = fastnn.conv2d %x, %w {groups = 3 : i64} : (tensor<1x6x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_zero_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{attribute 'groups' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = fastnn.conv2d %x, %w {groups = 0 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_bias_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects a bias of 4 elements of type 'f32', got 'tensor<3xf32>'}}
  %0 = fastnn.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_bias_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<1x4xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects a bias of 4 elements of type 'f32', got 'tensor<1x4xf32>'}}
  %0 = fastnn.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_bias_type(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf16>) -> tensor<1x4x6x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects a bias of 4 elements of type 'f32', got 'tensor<4xf16>'}}
  %0 = fastnn.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf16>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_stride_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{attribute 'strides' failed to satisfy constraint: i64 dense array attribute with exactly 2 elements}}
  %0 = fastnn.conv2d %x, %w {strides = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_pad_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{attribute 'pads' failed to satisfy constraint: i64 dense array attribute with exactly 4 elements}}
  %0 = fastnn.conv2d %x, %w {pads = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @conv2d_dilation_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{attribute 'dilations' failed to satisfy constraint: i64 dense array attribute with exactly 2 elements}}
  %0 = fastnn.conv2d %x, %w {dilations = array<i64: 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects positive strides}}
  %0 = fastnn.conv2d %x, %w {strides = array<i64: 1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_zero_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects positive dilations}}
  %0 = fastnn.conv2d %x, %w {dilations = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_negative_pad(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects non-negative pads}}
  %0 = fastnn.conv2d %x, %w {pads = array<i64: 0, 0, -1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv2d_kernel_too_large(%x: tensor<1x3x4x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x1x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{window of size 3 (dilation 2) does not fit input dimension 4 padded by 0+0}}
  %0 = fastnn.conv2d %x, %w {dilations = array<i64: 2, 1>} : (tensor<1x3x4x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x6xf32>
  return %0 : tensor<1x4x1x6xf32>
}

// -----

func.func @conv2d_result_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.conv2d' op inferred type(s) 'tensor<1x4x6x6xf32>' are incompatible with return type(s) of operation 'tensor<1x4x8x8xf32>'}}
  %0 = fastnn.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

// In nhwc the filter is OHWI: its last dimension is the input channels.
func.func @conv2d_nhwc_filter_layout(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x5xf32>) -> tensor<1x6x6x4xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{input has 3 channels, which is not groups (1) times the filter's 5 input channels}}
  %0 = fastnn.conv2d %x, %w {layout = #fastnn.layout<nhwc>} : (tensor<1x8x8x3xf32>, tensor<4x3x3x5xf32>) -> tensor<1x6x6x4xf32>
  return %0 : tensor<1x6x6x4xf32>
}

//===----------------------------------------------------------------------===//
// max_pool2d, avg_pool2d
//===----------------------------------------------------------------------===//

// -----

func.func @max_pool2d_3d_input(%x: tensor<3x8x8xf32>) -> tensor<3x4x4xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.max_pool2d' op expects a 4-D input, got 'tensor<3x8x8xf32>'}}
  %0 = fastnn.max_pool2d %x {kernel_shape = array<i64: 2, 2>} : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  return %0 : tensor<3x4x4xf32>
}

// -----

func.func @max_pool2d_indices_storage_order(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xi64> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.max_pool2d_indices' op expects storage_order 0 (row-major) or 1 (column-major), got 2}}
  %0 = fastnn.max_pool2d_indices %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, storage_order = 2 : i64} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xi64>
  return %0 : tensor<1x3x4x4xi64>
}

// -----

func.func @max_pool2d_indices_nhwc(%x: tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xi64> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.max_pool2d_indices' op expects the NCHW layout}}
  %0 = fastnn.max_pool2d_indices %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = #fastnn.layout<nhwc>} : tensor<1x8x8x3xf32> -> tensor<1x4x4x3xi64>
  return %0 : tensor<1x4x4x3xi64>
}

// -----

func.func @max_pool2d_missing_kernel(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error @+1 {{requires attribute 'kernel_shape'}}
  %0 = fastnn.max_pool2d %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @max_pool2d_kernel_count(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @+1 {{attribute 'kernel_shape' failed to satisfy constraint: i64 dense array attribute with exactly 2 elements}}
  %0 = fastnn.max_pool2d %x {kernel_shape = array<i64: 2, 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @max_pool2d_zero_kernel(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x9x8xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects a positive kernel shape}}
  %0 = fastnn.max_pool2d %x {kernel_shape = array<i64: 0, 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x9x8xf32>
  return %0 : tensor<1x3x9x8xf32>
}

// -----

func.func @max_pool2d_zero_stride(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.max_pool2d' op expects positive strides}}
  %0 = fastnn.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 0, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @max_pool2d_zero_dilation(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.max_pool2d' op expects positive dilations}}
  %0 = fastnn.max_pool2d %x {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 1, -1>} : tensor<1x3x8x8xf32> -> tensor<1x3x7x7xf32>
  return %0 : tensor<1x3x7x7xf32>
}

// -----

func.func @max_pool2d_negative_pad(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.max_pool2d' op expects non-negative pads}}
  %0 = fastnn.max_pool2d %x {kernel_shape = array<i64: 2, 2>, pads = array<i64: -1, 0, 0, 0>} : tensor<1x3x8x8xf32> -> tensor<1x3x7x7xf32>
  return %0 : tensor<1x3x7x7xf32>
}

// -----

func.func @max_pool2d_pad_as_large_as_kernel(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x5x5xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects pads smaller than the kernel}}
  %0 = fastnn.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x5x5xf32>
  return %0 : tensor<1x3x5x5xf32>
}

// -----

func.func @max_pool2d_kernel_larger_than_input(%x: tensor<1x3x8x2xf32>) -> tensor<1x3x6x1xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{window of size 3 (dilation 1) does not fit input dimension 2 padded by 0+0}}
  %0 = fastnn.max_pool2d %x {kernel_shape = array<i64: 3, 3>} : tensor<1x3x8x2xf32> -> tensor<1x3x6x1xf32>
  return %0 : tensor<1x3x6x1xf32>
}

// -----

// ceil_mode does not add a window that would start in the end padding: with
// it, (5 + 1 - 2) / 2 rounds up to 2, but the third window would start at 4,
// past the last input element (3).
func.func @max_pool2d_ceil_mode_window_in_padding(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<1x1x3x3xf32>' are incompatible with return type(s) of operation 'tensor<1x1x4x4xf32>'}}
  %0 = fastnn.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, ceil_mode} : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @max_pool2d_element_type(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf16> {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = fastnn.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf16>
  return %0 : tensor<1x3x4x4xf16>
}

// -----

func.func @avg_pool2d_3d_input(%x: tensor<3x8x8xf32>) -> tensor<3x4x4xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.avg_pool2d' op expects a 4-D input, got 'tensor<3x8x8xf32>'}}
  %0 = fastnn.avg_pool2d %x {kernel_shape = array<i64: 2, 2>} : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  return %0 : tensor<3x4x4xf32>
}

// -----

func.func @avg_pool2d_pad_as_large_as_kernel(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x10x8xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.avg_pool2d' op expects pads smaller than the kernel}}
  %0 = fastnn.avg_pool2d %x {kernel_shape = array<i64: 1, 1>, pads = array<i64: 1, 0, 1, 0>} : tensor<1x3x8x8xf32> -> tensor<1x3x10x8xf32>
  return %0 : tensor<1x3x10x8xf32>
}

// -----

func.func @avg_pool2d_result_shape(%x: tensor<1x3x7x7xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<1x3x3x3xf32>' are incompatible with return type(s) of operation 'tensor<1x3x4x4xf32>'}}
  %0 = fastnn.avg_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x3x7x7xf32> -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @avg_pool2d_has_no_dilations(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.avg_pool2d' op expects positive strides}}
  %0 = fastnn.avg_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, -2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

//===----------------------------------------------------------------------===//
// batch_norm, lrn
//===----------------------------------------------------------------------===//

// -----

func.func @batch_norm_rank(%x: tensor<4xf32>, %p: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects an input of rank >= 2}}
  %0 = fastnn.batch_norm %x, %p, %p, %p, %p : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @batch_norm_channels(%x: tensor<2x4x3x3xf32>, %p: tensor<4xf32>, %q: tensor<3xf32>) -> tensor<2x4x3x3xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects per-channel operands of 4 elements, got 'tensor<3xf32>'}}
  %0 = fastnn.batch_norm %x, %p, %p, %p, %q : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x4x3x3xf32>
  return %0 : tensor<2x4x3x3xf32>
}

// -----

func.func @batch_norm_nhwc_channels(%x: tensor<2x4x3x3xf32>, %p: tensor<4xf32>) -> tensor<2x4x3x3xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects per-channel operands of 3 elements, got 'tensor<4xf32>'}}
  %0 = fastnn.batch_norm %x, %p, %p, %p, %p {layout = #fastnn.layout<nhwc>} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  return %0 : tensor<2x4x3x3xf32>
}

// -----

func.func @batch_norm_rank2_statistic(%x: tensor<2x4xf32>, %p: tensor<4xf32>, %q: tensor<1x4xf32>) -> tensor<2x4xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects per-channel operands of 4 elements, got 'tensor<1x4xf32>'}}
  %0 = fastnn.batch_norm %x, %q, %p, %p, %p : (tensor<2x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @batch_norm_element_types(%x: tensor<2x4xf32>, %p: tensor<4xf32>, %h: tensor<4xf16>) -> tensor<2x4xf32> {
  // expected-error @+1 {{failed to verify that all of {scale, bias, mean, variance} have same element type}}
  %0 = fastnn.batch_norm %x, %p, %p, %p, %h : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @batch_norm_negative_epsilon(%x: tensor<2x4xf32>, %p: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{attribute 'epsilon' failed to satisfy constraint: 64-bit float attribute whose value is non-negative}}
  %0 = fastnn.batch_norm %x, %p, %p, %p, %p {epsilon = -1.0e-5 : f64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @batch_norm_nan_epsilon(%x: tensor<2x4xf32>, %p: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{attribute 'epsilon' failed to satisfy constraint: 64-bit float attribute whose value is non-negative}}
  %0 = fastnn.batch_norm %x, %p, %p, %p, %p {epsilon = 0x7FF8000000000000 : f64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @batch_norm_momentum(%x: tensor<2x4xf32>, %p: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{expects a momentum in [0, 1], got 1.5}}
  %0 = fastnn.batch_norm %x, %p, %p, %p, %p {momentum = 1.5 : f64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @lrn_rank(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{expects a 4-D input, got 'tensor<2x4xf32>'}}
  %0 = fastnn.lrn %x {size = 3 : i64} : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @lrn_size(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  // expected-error @+1 {{attribute 'size' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = fastnn.lrn %x {size = 0 : i64} : tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_rank(%a: tensor<4xf32>, %b: tensor<4x2xf32>) -> tensor<2xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of rank >= 2}}
  %0 = fastnn.matmul %a, %b : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @matmul_contracting(%a: tensor<3x4xf32>, %b: tensor<5x2xf32>) -> tensor<3x2xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{contracting dimensions differ: 4 vs 5}}
  %0 = fastnn.matmul %a, %b : (tensor<3x4xf32>, tensor<5x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @matmul_contracting_transposed(%a: tensor<3x4xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{contracting dimensions differ: 4 vs 2}}
  %0 = fastnn.matmul %a, %b {transpose_b} : (tensor<3x4xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x2xf32>) -> tensor<3x3x2xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{batch dimensions of 'tensor<2x3x4xf32>' and 'tensor<3x4x2xf32>' do not broadcast}}
  %0 = fastnn.matmul %a, %b : (tensor<2x3x4xf32>, tensor<3x4x2xf32>) -> tensor<3x3x2xf32>
  return %0 : tensor<3x3x2xf32>
}

// -----

func.func @matmul_element_types(%a: tensor<3x4xf32>, %b: tensor<4x2xf16>) -> tensor<3x2xf32> {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = fastnn.matmul %a, %b : (tensor<3x4xf32>, tensor<4x2xf16>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// -----

func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{operand shapes 'tensor<2x3xf32>' and 'tensor<2xf32>' do not broadcast}}
  %0 = fastnn.add %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @pow_broadcast(%a: tensor<4x1xf32>, %b: tensor<3x2xf32>) -> tensor<4x2xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.pow' op operand shapes 'tensor<4x1xf32>' and 'tensor<3x2xf32>' do not broadcast}}
  %0 = fastnn.pow %a, %b : (tensor<4x1xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @mul_element_types(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = fastnn.mul %a, %b : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @sub_result_shape(%a: tensor<2x1xf32>, %b: tensor<3xf32>) -> tensor<2x1xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<2x1xf32>'}}
  %0 = fastnn.sub %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @relu_integer(%a: tensor<2xi32>) -> tensor<2xi32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = fastnn.relu %a : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @tanh_result_type(%a: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "fastnn.tanh"(%a) : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @erf_integer(%a: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = fastnn.erf %a : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @clip_min_above_max(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{expects min <= max, got 6.000000e+00 > 0.000000e+00}}
  %0 = fastnn.clip %a {min = 6.0 : f64, max = 0.0 : f64} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @clip_nan(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{expects min <= max, got nan > 6}}
  %0 = fastnn.clip %a {min = 0x7FF8000000000000 : f64, max = 6.0 : f64} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @clip_missing_bound(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{requires attribute 'max'}}
  %0 = fastnn.clip %a {min = 0.0 : f64} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dropout_ratio_one(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{expects a ratio in [0, 1), got 1}}
  %0 = fastnn.dropout %a {ratio = 1.0 : f64} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dropout_negative_ratio(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{attribute 'ratio' failed to satisfy constraint: 64-bit float attribute whose value is non-negative}}
  %0 = fastnn.dropout %a {ratio = -0.5 : f64} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @cast_shape(%a: tensor<2xf32>) -> tensor<3xi32> {
  // expected-error @+1 {{requires the same shape for all operands and results}}
  %0 = fastnn.cast %a {to = i32} : tensor<2xf32> -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @cast_result_type(%a: tensor<2xf32>) -> tensor<2xi64> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<2xi32>' are incompatible with return type(s) of operation 'tensor<2xi64>'}}
  %0 = fastnn.cast %a {to = i32} : tensor<2xf32> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @cast_unsupported_type(%a: tensor<2xf32>) -> tensor<2xindex> {
  // expected-error @+1 {{attribute 'to' failed to satisfy constraint: type attribute of 16-bit float or bfloat16 type or 32-bit float or 64-bit float or 1-bit signless integer or 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 8-bit unsigned integer}}
  %0 = fastnn.cast %a {to = index} : tensor<2xf32> -> tensor<2xindex>
  return %0 : tensor<2xindex>
}

//===----------------------------------------------------------------------===//
// Softmax and reductions
//===----------------------------------------------------------------------===//

// -----

func.func @softmax_axis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'fastnn.softmax' op axis 2 is out of range for rank 2}}
  %0 = fastnn.softmax %a {axis = 2 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// The importer normalises ONNX's negative axes; the IR holds non-negative ones.
func.func @log_softmax_negative_axis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'fastnn.log_softmax' op axis -1 is out of range for rank 2}}
  %0 = fastnn.log_softmax %a {axis = -1 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @reduce_axis(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.reduce_sum' op axis 2 is out of range for rank 2}}
  %0 = fastnn.reduce_sum %a {axes = array<i64: 2>} : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_axes_order(%a: tensor<2x3x4xf32>) -> tensor<3xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.reduce_mean' op expects distinct axes in ascending order}}
  %0 = fastnn.reduce_mean %a {axes = array<i64: 2, 0>} : tensor<2x3x4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reduce_axes_repeated(%a: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.reduce_max' op expects distinct axes in ascending order}}
  %0 = fastnn.reduce_max %a {axes = array<i64: 1, 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @reduce_keepdims(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.reduce_min' op inferred type(s) 'tensor<2x1xf32>' are incompatible with return type(s) of operation 'tensor<2xf32>'}}
  %0 = fastnn.reduce_min %a {axes = array<i64: 1>, keepdims} : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// -----

func.func @concat_no_inputs() -> tensor<0xf32> {
  // expected-error @+1 {{expected 1 or more operands, but found 0}}
  %0 = fastnn.concat {axis = 0 : i64} : () -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.concat' op axis 2 is out of range for rank 2}}
  %0 = fastnn.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects inputs of equal rank, got 'tensor<2x3xf32>' and 'tensor<3xf32>'}}
  %0 = fastnn.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_other_dimension(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<2x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{inputs differ in dimension 0 (not the concatenation axis): 'tensor<2x3xf32>' and 'tensor<3x3xf32>'}}
  %0 = fastnn.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_element_types(%a: tensor<2xi64>, %b: tensor<2xi32>) -> tensor<4xi64> {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = fastnn.concat %a, %b {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi32>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @concat_result_shape(%a: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<2x6xf32>' are incompatible with return type(s) of operation 'tensor<4x3xf32>'}}
  %0 = fastnn.concat %a, %a {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @reshape_size(%a: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{cannot reshape 'tensor<2x3xf32>' (6 elements) to 'tensor<7xf32>' (7 elements)}}
  %0 = fastnn.reshape %a : tensor<2x3xf32> -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @reshape_element_type(%a: tensor<2x3xf32>) -> tensor<6xf16> {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = fastnn.reshape %a : tensor<2x3xf32> -> tensor<6xf16>
  return %0 : tensor<6xf16>
}

// -----

func.func @reshape_dynamic(%a: tensor<2x3xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{result #0 must be statically shaped tensor}}
  %0 = fastnn.reshape %a : tensor<2x3xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @transpose_size(%a: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{permutation has 2 entries for an input of rank 3}}
  %0 = fastnn.transpose %a {permutation = array<i64: 1, 0>} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}

// -----

func.func @transpose_repeated(%a: tensor<2x3x4xf32>) -> tensor<3x3x4xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects a permutation of 0..2}}
  %0 = fastnn.transpose %a {permutation = array<i64: 1, 1, 2>} : tensor<2x3x4xf32> -> tensor<3x3x4xf32>
  return %0 : tensor<3x3x4xf32>
}

// -----

func.func @transpose_out_of_range(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects a permutation of 0..1}}
  %0 = fastnn.transpose %a {permutation = array<i64: 1, 2>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_result_shape(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  %0 = fastnn.transpose %a {permutation = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @pad_count(%a: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{expects 4 pads (begins then ends), got 2}}
  %0 = fastnn.pad %a {pads = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @pad_negative(%a: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.pad' op expects non-negative pads}}
  %0 = fastnn.pad %a {pads = array<i64: -1, 0, 0, 0>} : tensor<2x3xf32> -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @pad_reflect_too_wide(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{reflect padding of dimension 1 must be smaller than its size 3}}
  %0 = fastnn.pad %a {pads = array<i64: 0, 0, 0, 3>, mode = #fastnn.pad_mode<reflect>} : tensor<2x3xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @pad_edge_of_empty(%a: tensor<2x0xf32>) -> tensor<2x1xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{edge padding of an empty dimension}}
  %0 = fastnn.pad %a {pads = array<i64: 0, 1, 0, 0>, mode = #fastnn.pad_mode<edge>} : tensor<2x0xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @pad_unknown_mode(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{expected ::mlir::fastnn::PadMode to be one of: constant, reflect, edge}}
  // expected-error @+1 {{failed to parse FastNN_PadModeAttr parameter 'value' which is to be a `::mlir::fastnn::PadMode`}}
  %0 = fastnn.pad %a {pads = array<i64: 0, 0, 0, 0>, mode = #fastnn.pad_mode<wrap>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @slice_rank(%a: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{expects a result of the input's rank 2}}
  %0 = fastnn.slice %a {offsets = array<i64: 0>, steps = array<i64: 1>} : tensor<2x3xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @slice_attribute_count(%a: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{expects one offset and one step per dimension}}
  %0 = fastnn.slice %a {offsets = array<i64: 0, 0>, steps = array<i64: 1>} : tensor<2x3xf32> -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @slice_zero_step(%a: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{step of dimension 0 is zero}}
  %0 = fastnn.slice %a {offsets = array<i64: 0, 0>, steps = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @slice_past_end(%a: tensor<2x10xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{window of dimension 1 (offset 2, step 2, size 5) leaves the input's 10 elements}}
  %0 = fastnn.slice %a {offsets = array<i64: 0, 2>, steps = array<i64: 1, 2>} : tensor<2x10xf32> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @slice_negative_step_past_begin(%a: tensor<2x10xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{window of dimension 1 (offset 5, step -2, size 4) leaves the input's 10 elements}}
  %0 = fastnn.slice %a {offsets = array<i64: 0, 5>, steps = array<i64: 1, -2>} : tensor<2x10xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @slice_negative_offset(%a: tensor<2x10xf32>) -> tensor<1x10xf32> {
  // expected-error @+1 {{window of dimension 0 (offset -1, step 1, size 1) leaves the input's 2 elements}}
  %0 = fastnn.slice %a {offsets = array<i64: -1, 0>, steps = array<i64: 1, 1>} : tensor<2x10xf32> -> tensor<1x10xf32>
  return %0 : tensor<1x10xf32>
}

// -----

func.func @gather_axis(%a: tensor<2x3xf32>, %i: tensor<2xi64>) -> tensor<2x3x2xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.gather' op axis 2 is out of range for rank 2}}
  %0 = fastnn.gather %a, %i {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3x2xf32>
  return %0 : tensor<2x3x2xf32>
}

// -----

func.func @gather_float_indices(%a: tensor<2x3xf32>, %i: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = fastnn.gather %a, %i {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @gather_element_type(%a: tensor<2x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf16> {
  // expected-error @+1 {{failed to verify that all of {input, result} have same element type}}
  %0 = fastnn.gather %a, %i {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

func.func @gather_result_shape(%a: tensor<2x3xf32>, %i: tensor<4xi32>) -> tensor<4x2xf32> {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<4x2xf32>'}}
  %0 = fastnn.gather %a, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4xi32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// allreduce
//===----------------------------------------------------------------------===//

func.func @allreduce_empty() {
  // expected-error @+1 {{'fastnn.allreduce' op expects at least one input}}
  "fastnn.allreduce"() <{kind = #fastnn<allreduce_kind sum>}> : () -> ()
  return
}

// -----

func.func @allreduce_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'fastnn.allreduce' op expects inputs of one element type (one buffer), got 'f32' and 'f16'}}
  %0:2 = fastnn.allreduce mean %a, %b : tensor<4xf32>, tensor<4xf16>
  return
}

// -----

func.func @allreduce_kind(%a: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::fastnn::AllReduceKind to be one of: sum, mean}}
  // expected-error @+1 {{failed to parse FastNN_AllReduceKindAttr parameter 'value' which is to be a `::mlir::fastnn::AllReduceKind`}}
  %0 = fastnn.allreduce max %a : tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// comparisons and select
//===----------------------------------------------------------------------===//

func.func @compare_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'fastnn.less' op requires the same element type for all operands}}
  %0 = fastnn.less %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xi1>
  return
}

// -----

func.func @compare_shapes(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.equal' op operand shapes 'tensor<4xf32>' and 'tensor<3xf32>' do not broadcast}}
  %0 = fastnn.equal %a, %b : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @select_shapes(%c: tensor<2xi1>, %a: tensor<4xf32>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @+1 {{'fastnn.select' op operand shapes 'tensor<2xi1>', 'tensor<4xf32>' and 'tensor<4xf32>' do not broadcast}}
  %0 = fastnn.select %c, %a, %a : (tensor<2xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @select_condition(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'fastnn.select' op operand #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = fastnn.select %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @random_uniform_bounds() -> tensor<4xf32> {
  // expected-error @+1 {{'fastnn.random_uniform' op expects finite bounds with low <= high, got [1.000000e+00, 0.000000e+00)}}
  %0 = fastnn.random_uniform {low = 1.0 : f64, high = 0.0 : f64, seed = 1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @random_normal_scale() -> tensor<4xf32> {
  // expected-error @+1 {{'fastnn.random_normal' op expects a finite mean and a non-negative scale}}
  %0 = fastnn.random_normal {scale = -1.0 : f64, seed = 1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @random_mask_probability(%step: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{'fastnn.random_mask' op expects a probability in [0, 1], got 1.500000e+00}}
  %0 = fastnn.random_mask %step : tensor<i64> {probability = 1.5 : f64, seed = 1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @random_mask_step(%step: tensor<1xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'fastnn.random_mask' op expects a scalar step}}
  %0 = fastnn.random_mask %step : tensor<1xi64> {probability = 0.5 : f64, seed = 1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @random_draw_integer() -> tensor<4xi32> {
  // expected-error @+1 {{'fastnn.random_uniform' op result #0 must be statically shaped tensor of}}
  %0 = fastnn.random_uniform {seed = 1 : i64} : tensor<4xi32>
  return %0 : tensor<4xi32>
}
