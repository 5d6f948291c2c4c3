// RUN: tinymlir-opt %s --tinymlir-gpu-prepare-loops | FileCheck %s

// memref.copy becomes a linalg op (so that it becomes a parallel loop on the
// GPU), and a static memref.reshape a memref.reinterpret_cast view.
// CHECK-LABEL: func.func @kernel
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.reshape
// CHECK: memref.reinterpret_cast %arg0 to offset: [0], sizes: [2, 2], strides: [2, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%arg0 : memref<4xf32>) outs(%arg1 : memref<4xf32>)
func.func @kernel(%s: memref<4xf32>, %d: memref<4xf32>, %shape: memref<2xi64>) -> memref<2x2xf32> {
  %v = memref.reshape %s(%shape) : (memref<4xf32>, memref<2xi64>) -> memref<2x2xf32>
  memref.copy %s, %d : memref<4xf32> to memref<4xf32>
  return %v : memref<2x2xf32>
}
