// RUN: tinymlir-opt %s --tinymlir-gpu-pack-ptx-bundle="libdevice=/cuda/libdevice.10.bc" | FileCheck %s
// RUN: not tinymlir-opt %s --tinymlir-gpu-pack-ptx-bundle 2>&1 | FileCheck %s --check-prefix=NOLIBDEVICE

// The per-chip PTX objects become one object: the bundle header, then each
// chip's PTX with its byte count (runtime/gpu/RuntimeAbi.h), first chip first.
// CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, assembly = "//tinymlir-ptx-bundle\0A//target sm_90 6\0APTX-90//target sm_75 23\0APTX-75 calls __nv_tanhf">]
// Without libdevice, PTX that calls its functions (__nv_*) could not load.
// NOLIBDEVICE: error: [gpu] the kernels call libdevice math functions but libdevice.10.bc was not found
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, assembly = "PTX-90">, #gpu.object<#nvvm.target<chip = "sm_75">, assembly = "PTX-75 calls __nv_tanhf">]
}
