// RUN: tinymlir-opt %s --tinymlir-reuse-dead-operands | FileCheck %s

#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>

// exp(x - m) into a donated argument's tensor, read by nothing after: the
// op writes into it. The second op's result is the output: it keeps its
// tensor.empty (eliminate-empty-tensors makes it write into the output).
// CHECK-LABEL: func.func @donated
// CHECK: %[[X:.*]] = bufferization.to_tensor %arg0 restrict writable
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[X]], %{{.*}} : tensor<8xf64>, tensor<f64>) outs(%[[X]] : tensor<8xf64>)
// CHECK: linalg.generic {{.*}} ins(%[[T]], %{{.*}} : tensor<8xf64>, tensor<f64>) outs(%{{.*}} : tensor<8xf64>)
// CHECK-NOT: outs(%[[T]]
func.func @donated(%arg0: memref<8xf64>, %m: tensor<f64>, %s: tensor<f64>) {
  %x = bufferization.to_tensor %arg0 restrict writable : memref<8xf64> to tensor<8xf64>
  %e = tensor.empty() : tensor<8xf64>
  %t = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel"]}
      ins(%x, %m : tensor<8xf64>, tensor<f64>) outs(%e : tensor<8xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %d = arith.subf %a, %b : f64
    %y = math.exp %d : f64
    linalg.yield %y : f64
  } -> tensor<8xf64>
  %u = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel"]}
      ins(%t, %s : tensor<8xf64>, tensor<f64>) outs(%e : tensor<8xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %y = arith.divf %a, %b : f64
    linalg.yield %y : f64
  } -> tensor<8xf64>
  %w = bufferization.materialize_in_destination %u in %x : (tensor<8xf64>, tensor<8xf64>) -> tensor<8xf64>
  bufferization.materialize_in_destination %w in restrict writable %arg0 : (tensor<8xf64>, memref<8xf64>) -> ()
  return
}

// An intermediate read by nothing after the op is reused; one still read
// later (%t by the last op) is not, nor is a read-only argument.
// CHECK-LABEL: func.func @intermediates
// CHECK: %[[A:.*]] = bufferization.to_tensor %arg0 restrict :
// CHECK: %[[E:.*]] = tensor.empty
// CHECK: %[[T:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<8xf64>)
// CHECK: %[[U:.*]] = linalg.generic {{.*}} ins(%[[T]] : tensor<8xf64>) outs(%[[E]] : tensor<8xf64>)
// CHECK: linalg.generic {{.*}} ins(%[[U]], %[[T]] : tensor<8xf64>, tensor<8xf64>) outs(%[[U]] : tensor<8xf64>)
func.func @intermediates(%arg0: memref<8xf64>) -> tensor<8xf64> {
  %a = bufferization.to_tensor %arg0 restrict : memref<8xf64> to tensor<8xf64>
  %e = tensor.empty() : tensor<8xf64>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%x: f64, %o: f64):
    %y = math.exp %x : f64
    linalg.yield %y : f64
  } -> tensor<8xf64>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%t : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%x: f64, %o: f64):
    %y = math.sqrt %x : f64
    linalg.yield %y : f64
  } -> tensor<8xf64>
  %v = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%u, %t : tensor<8xf64>, tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%x: f64, %z: f64, %o: f64):
    %y = arith.addf %x, %z : f64
    linalg.yield %y : f64
  } -> tensor<8xf64>
  return %v : tensor<8xf64>
}

// A transposed read of the same input: not elementwise, not reused.
// CHECK-LABEL: func.func @transposed
// CHECK: %[[Y:.*]] = bufferization.to_tensor %arg0 restrict writable : memref<4x4xf64>
// CHECK-NOT: outs(%[[Y]]
func.func @transposed(%arg0: memref<4x4xf64>) -> tensor<4x4xf64> {
  %x = bufferization.to_tensor %arg0 restrict writable : memref<4x4xf64> to tensor<4x4xf64>
  %e = tensor.empty() : tensor<4x4xf64>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf64>) outs(%e : tensor<4x4xf64>) {
  ^bb0(%a: f64, %o: f64):
    linalg.yield %a : f64
  } -> tensor<4x4xf64>
  return %t : tensor<4x4xf64>
}
