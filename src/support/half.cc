// IEEE binary16 and bfloat16 conversions (round to nearest even), bit-exact
// on every path, including subnormals, infinities and NaN.
#include <cstring>

#include "kiln/tensor.h"

namespace kiln {
namespace {

uint32_t FloatBits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
float BitsFloat(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

uint16_t FloatToHalfBits(float f) {
  uint32_t x = FloatBits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0u));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);  // underflow -> signed zero
    mant |= 0x800000u;                                  // make the implicit bit explicit
    int shift = 14 - e;
    uint32_t half_mant = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into exp: correct
  return static_cast<uint16_t>(half);
}

float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return BitsFloat(sign);
    // subnormal: normalize
    int e = -1;
    do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
    mant &= 0x3ffu;
    return BitsFloat(sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | (mant << 13));
  }
  if (exp == 0x1f) return BitsFloat(sign | 0x7f800000u | (mant << 13));
  return BitsFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

}  // namespace

Float16::Float16(float f) : bits(FloatToHalfBits(f)) {}
Float16::operator float() const { return HalfBitsToFloat(bits); }

BFloat16::BFloat16(float f) {
  uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) { bits = static_cast<uint16_t>((x >> 16) | 0x40u); return; }  // quiet NaN
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  bits = static_cast<uint16_t>(x >> 16);
}
BFloat16::operator float() const { return BitsFloat(static_cast<uint32_t>(bits) << 16); }

}  // namespace kiln
