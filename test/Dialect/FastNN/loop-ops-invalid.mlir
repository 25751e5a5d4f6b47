// RUN: fastnnc-opt %s -split-input-file -verify-diagnostics

func.func @not_stacked() -> tensor<2xf32> {
  // expected-error @+1 {{expects scalars yielded and results stacking them over the iterations ('tensor<3xf32>'), got 'tensor<f32>' and 'tensor<2xf32>'}}
  %r = fastnn.loop 3 iterations {
  ^bb0(%i: tensor<i64>):
    %c = fastnn.constant dense<1.0> : tensor<f32>
    fastnn.loop_yield %c : tensor<f32>
  } : tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

func.func @no_index() -> tensor<3xf32> {
  // expected-error @+1 {{expects a body whose one argument is the iteration index, 'tensor<i64>'}}
  %r = fastnn.loop 3 iterations {
    %c = fastnn.constant dense<1.0> : tensor<f32>
    fastnn.loop_yield %c : tensor<f32>
  } : tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

func.func @count(%i: tensor<i64>) -> tensor<3xf32> {
  // expected-error @+1 {{expects 1 yielded values, one per result, got 0}}
  %r = fastnn.loop 3 iterations {
  ^bb0(%j: tensor<i64>):
    fastnn.loop_yield
  } : tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

func.func @fetch_elsewhere(%x: tensor<2xf32>, %y: tensor<2xi64>) {
  %c = fastnn.constant dense<1.0> : tensor<2xf32>
  // expected-error @+1 {{expects the step function's inputs, where the batch is fetched to}}
  %a, %b = fastnn.next_batch %c, %y : tensor<2xf32>, tensor<2xi64>
  return
}
