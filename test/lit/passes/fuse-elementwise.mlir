// RUN: tinymlir-opt %s --tinymlir-fuse-elementwise | FileCheck %s
// RUN: tinymlir-opt %s --tinymlir-fuse-elementwise="max-inputs=2" | FileCheck %s --check-prefix=BOUND

// A chain of three additions fuses into one generic of four inputs, as
// linalg-fuse-elementwise-ops fuses it; with at most 2 inputs, nothing fuses.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %arg1, %arg2, %arg3
// CHECK-NOT: linalg.generic
// BOUND-LABEL: func.func @chain
// BOUND-COUNT-3: linalg.generic
#id = affine_map<(d0) -> (d0)>
func.func @chain(%a: tensor<8xf64>, %b: tensor<8xf64>, %c: tensor<8xf64>, %d: tensor<8xf64>) -> tensor<8xf64> {
  %e = tensor.empty() : tensor<8xf64>
  %0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<8xf64>, tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %s = arith.addf %x, %y : f64
    linalg.yield %s : f64
  } -> tensor<8xf64>
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%0, %c : tensor<8xf64>, tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %s = arith.addf %x, %y : f64
    linalg.yield %s : f64
  } -> tensor<8xf64>
  %2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%1, %d : tensor<8xf64>, tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %s = arith.addf %x, %y : f64
    linalg.yield %s : f64
  } -> tensor<8xf64>
  return %2 : tensor<8xf64>
}
