// tinymlir: a small tensor JIT on MLIR. Include this one header.
#pragma once

#include <tinymlir/array.h>
#include <tinymlir/gpu.h>
#include <tinymlir/index.h>
#include <tinymlir/interrupt.h>
#include <tinymlir/jit.h>
#include <tinymlir/numpy.h>
#include <tinymlir/tensor.h>
