// RUN: not tinymlir-opt %s --tinymlir-straight-line-dealloc 2>&1 | FileCheck %s

// A buffer that leaves its block (returned) is an error, not a leak or a
// use after free.
// CHECK: a view of this buffer leaves its block
func.func @escapes() -> memref<2xf64> {
  %a = memref.alloc() : memref<2xf64>
  return %a : memref<2xf64>
}
