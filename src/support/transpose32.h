// A 2-D transpose of 4-byte elements in 16x16 register blocks (AVX-512):
// the layout conversions between NCHW and channels-last of float32 tensors
// (a graph output a channels-last kernel wrote, an NCHW input with more than
// 4 channels). CopyToRowMajor's scalar tiles gathered one element at a time
// (~2.5 ns per value: 8% of deeplabv3's run went to converting its
// 21x512x512 output).
#pragma once

#include <cstdint>

namespace kiln {

// dst[a * ld + i] = src[a + i * ls] for a < na, i < ni (ls may be any
// value, ld >= ni), in AVX-512 blocks where the CPU has AVX-512F, else
// Transpose32Portable's. `stream`: write with non-temporal stores where
// they are whole aligned lines, for a large destination nothing reads soon
// (a graph output): cached stores first read each line they fill, so a
// copy bound by memory moves half as much again.
void Transpose32(uint32_t* dst, const uint32_t* src, int64_t na, int64_t ni, int64_t ls, int64_t ld, bool stream = false);

// The same in plain scalar 16x16 blocks (CPUs without AVX-512; tests).
void Transpose32Portable(uint32_t* dst, const uint32_t* src, int64_t na, int64_t ni, int64_t ls, int64_t ld);

}  // namespace kiln
