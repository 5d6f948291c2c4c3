// RUN: tinymlir-opt %s --tinymlir-private-fill-inits | FileCheck %s

// Two reductions share one zero-filled init (as CSE leaves them): the second
// destination use gets a fill of its own, of its own tensor.empty; the first
// keeps the original. A use that only reads the fill keeps sharing it.
// CHECK-LABEL: func.func @shared
// CHECK: %[[E:.*]] = tensor.empty() : tensor<f64>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%[[E]] : tensor<f64>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<f64>
// CHECK: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%[[E2]] : tensor<f64>)
// CHECK: linalg.reduce ins(%arg0 : tensor<4xf64>) outs(%[[F2]] : tensor<f64>)
// CHECK: linalg.reduce ins(%arg1 : tensor<4xf64>) outs(%[[F]] : tensor<f64>)
// CHECK: linalg.generic {{.*}} ins(%[[F]] : tensor<f64>)
// CHECK-NOT: linalg.fill
func.func @shared(%a: tensor<4xf64>, %b: tensor<4xf64>) -> (tensor<f64>, tensor<f64>, tensor<f64>) {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<f64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %r = linalg.reduce ins(%a : tensor<4xf64>) outs(%f : tensor<f64>) dimensions = [0]
    (%x: f64, %acc: f64) {
      %s = arith.addf %x, %acc : f64
      linalg.yield %s : f64
    }
  %q = linalg.reduce ins(%b : tensor<4xf64>) outs(%f : tensor<f64>) dimensions = [0]
    (%x: f64, %acc: f64) {
      %s = arith.addf %x, %acc : f64
      linalg.yield %s : f64
    }
  %e2 = tensor.empty() : tensor<f64>
  %n = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                       iterator_types = []} ins(%f : tensor<f64>) outs(%e2 : tensor<f64>) {
    ^bb0(%x: f64, %o: f64):
      %m = arith.negf %x : f64
      linalg.yield %m : f64
  } -> tensor<f64>
  return %r, %q, %n : tensor<f64>, tensor<f64>, tensor<f64>
}

// One destination use (and a read): nothing to do.
// CHECK-LABEL: func.func @single
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @single(%a: tensor<4xf64>) -> tensor<f64> {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<f64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %r = linalg.reduce ins(%a : tensor<4xf64>) outs(%f : tensor<f64>) dimensions = [0]
    (%x: f64, %acc: f64) {
      %s = arith.addf %x, %acc : f64
      linalg.yield %s : f64
    }
  return %r : tensor<f64>
}
