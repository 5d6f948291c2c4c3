// RUN: tinymlir-opt %s --tinymlir-fold-reshaped-slices --cse | FileCheck %s

// A row read squeezed and given its unit axis back is the row's box itself:
// after CSE the update reads and writes one value (one-shot bufferization then
// computes it in the row).
// CHECK-LABEL: func.func @row_update
// CHECK: %[[BOX:.*]] = tensor.extract_slice %{{.*}}[%{{.*}}, 0] [1, %{{.*}}] [1, 1] : tensor<6x6xf64> to tensor<1x?xf64>
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} ins(%[[BOX]] : tensor<1x?xf64>) outs(%[[BOX]] : tensor<1x?xf64>)
func.func @row_update(%C: tensor<6x6xf64>, %i: index, %n: index) -> tensor<6x6xf64> {
  %row = tensor.extract_slice %C[%i, 0] [1, %n] [1, 1] : tensor<6x6xf64> to tensor<?xf64>
  %x = tensor.expand_shape %row [[0, 1]] output_shape [1, %n] : tensor<?xf64> into tensor<1x?xf64>
  %box = tensor.extract_slice %C[%i, 0] [1, %n] [1, 1] : tensor<6x6xf64> to tensor<1x?xf64>
  %v = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x?xf64>) outs(%box : tensor<1x?xf64>) {
  ^bb0(%in: f64, %out: f64):
    %d = arith.addf %in, %in : f64
    linalg.yield %d : f64
  } -> tensor<1x?xf64>
  %r = tensor.insert_slice %v into %C[%i, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<6x6xf64>
  return %r : tensor<6x6xf64>
}
