// Reference kernels of Cast and CastLike, between every pair of dtypes.
//  - float -> integer truncates toward zero and saturates (NaN -> 0): the
//    spec leaves out-of-range results undefined, kiln picks a defined one.
//  - integer -> integer wraps (two's complement), as numpy's astype.
//  - to float16/bfloat16: round to nearest even, from double without double
//    rounding (round-to-odd to float first).
//  - number -> string: the shortest digits that read back to the same value
//    of the source type, formatted as numpy's str() ("0.1", "1e-05", "inf").
//  - string -> number: decimal text, "NaN", "INF", "+INF", "-INF" (any case).
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ops/elementwise.h"
#include "providers/reference/elementwise_util.h"

namespace kiln::reference {
namespace {

using runtime::KernelContext;

// double -> float rounding to odd: the float neighbour of d whose last
// mantissa bit is 1 when d is not exact. A later round-to-nearest-even to a
// narrower type (11 or 8 bits) is then the correctly rounded result of d.
float RoundToOddFloat(double d) {
  float f = static_cast<float>(d);
  if (std::isfinite(f) && static_cast<double>(f) != d) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if ((bits & 1u) == 0) f = std::nextafter(f, d > static_cast<double>(f) ? INFINITY : -INFINITY);
  }
  return f;
}

// Integer -> float rounding to odd, straight from the integer's bits: going
// through double would already round a 64-bit value (2^62 + 2^54 + 1 becomes
// the tie 2^62 + 2^54), and the second rounding would then pick "even".
template <typename I>
float RoundToOddFloatFromInt(I v) {
  bool negative = false;
  if constexpr (std::is_signed_v<I>) negative = v < 0;
  uint64_t mag = negative ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int shift = 0;
  while ((mag >> shift) >= (uint64_t{1} << 24)) ++shift;  // keep 24 significant bits
  uint64_t kept = mag >> shift;
  if (shift > 0 && (mag & ((uint64_t{1} << shift) - 1)) != 0) kept |= 1;  // sticky bit: round to odd
  const float f = std::ldexp(static_cast<float>(kept), shift);
  return negative ? -f : f;
}

// Any numeric value -> To.
template <typename To, typename From>
To ConvertNumber(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return Num(v) != 0;
  } else if constexpr (std::is_same_v<From, bool>) {
    if constexpr (kIsHalf<To>) return To(v ? 1.0f : 0.0f);
    else return static_cast<To>(v ? 1 : 0);
  } else if constexpr (kIsHalf<To>) {
    if constexpr (std::is_same_v<From, float> || kIsHalf<From>) return To(static_cast<float>(v));
    else if constexpr (std::is_same_v<From, double>) return To(RoundToOddFloat(v));
    else return To(RoundToOddFloatFromInt(v));  // |int64| needs > 24 bits: avoid double rounding
  } else if constexpr (std::is_floating_point_v<To>) {
    if constexpr (kIsHalf<From>) return static_cast<To>(static_cast<float>(v));
    else return static_cast<To>(v);  // one correctly rounded conversion
  } else if constexpr (kIsFloat<From>) {
    return SaturateFromDouble<To>(ToDouble(v));
  } else {
    return static_cast<To>(v);  // integer -> integer: modular (defined since C++20)
  }
}

// Shortest "%.Ne" digits that read back as the same value of type T.
template <typename T>
std::string ShortestScientific(double v) {
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, v);
    const double back = std::strtod(buf, nullptr);
    if (ToDouble(ConvertNumber<T>(back)) == ToDouble(ConvertNumber<T>(v))) break;
  }
  return buf;
}

// numpy's str() of a float scalar: positional for 1e-4 <= |v| < 1e16 with at
// least one fractional digit ("2.0"), scientific otherwise ("1e-05").
template <typename T>
std::string FloatToString(T value) {
  const double v = ToDouble(value);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  const std::string sci = ShortestScientific<T>(v);  // "-d.ddde+XX"
  const size_t epos = sci.find('e');
  std::string mant = sci.substr(0, epos);
  const int exp10 = std::atoi(sci.c_str() + epos + 1);
  const bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = neg ? "-" : "";
  const double a = std::fabs(v);
  if (a >= 1e-4 && a < 1e16) {
    if (exp10 >= 0) {
      const size_t int_len = static_cast<size_t>(exp10) + 1;
      if (digits.size() <= int_len) {
        out += digits + std::string(int_len - digits.size(), '0') + ".0";
      } else {
        out += digits.substr(0, int_len) + "." + digits.substr(int_len);
      }
    } else {
      out += "0." + std::string(static_cast<size_t>(-exp10 - 1), '0') + digits;
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char e[16];
  std::snprintf(e, sizeof e, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
  return out + e;
}

template <typename From>
std::string ToString(const From& v) {
  if constexpr (std::is_same_v<From, std::string>) return v;
  else if constexpr (std::is_same_v<From, bool>) return v ? "True" : "False";  // numpy's str(bool)
  else if constexpr (kIsFloat<From>) return FloatToString(v);
  else return std::to_string(v);
}

bool EqualsNoCase(const std::string& a, const char* b) {
  if (a.size() != std::strlen(b)) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// Parses a decimal number (or NaN/INF spellings) without locale effects.
bool ParseDouble(const std::string& s0, double& out) {
  size_t b = 0, e = s0.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s0[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s0[e - 1]))) --e;
  std::string s = s0.substr(b, e - b);
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.erase(0, 1);
  }
  if (EqualsNoCase(s, "nan")) { out = std::nan(""); return true; }
  if (EqualsNoCase(s, "inf") || EqualsNoCase(s, "infinity")) { out = neg ? -INFINITY : INFINITY; return true; }
  if (s.empty() || s[0] == '+' || s[0] == '-') return false;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (p != s.data() + s.size()) return false;
  if (ec == std::errc::result_out_of_range) v = std::strtod(s.c_str(), nullptr);  // inf or 0 with the right sign
  else if (ec != std::errc()) return false;
  out = neg ? -v : v;
  return true;
}

template <typename To>
bool FromString(const std::string& s, To& out) {
  if constexpr (std::is_same_v<To, std::string>) {
    out = s;
    return true;
  } else {
    if constexpr (std::is_same_v<To, bool>) {
      if (EqualsNoCase(s, "true")) { out = true; return true; }
      if (EqualsNoCase(s, "false")) { out = false; return true; }
    }
    if constexpr (kIsInt<To>) {
      // Integers parse exactly (int64 beyond 2^53 does not survive double).
      size_t b = s.size() && s[0] == '+' ? 1 : 0;
      To v{};
      auto [p, ec] = std::from_chars(s.data() + b, s.data() + s.size(), v);
      if (ec == std::errc() && p == s.data() + s.size()) { out = v; return true; }
    }
    double d = 0;
    if (!ParseDouble(s, d)) return false;
    if constexpr (kIsHalf<To>) out = To(RoundToOddFloat(d));
    else out = ConvertNumber<To>(d);
    return true;
  }
}

Status CastTo(KernelContext& ctx, DType to) {
  const Tensor& x = ctx.input(0);
  if (!x.defined()) return ctx.Error("input 0 is missing or not a tensor");
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, to, x.shape()));
  Status err = Status::Ok();
  Status s = VisitAll(x.dtype(), [&](auto ftag) {
    using From = decltype(ftag);
    Status s2 = VisitAll(to, [&](auto ttag) {
      using To = decltype(ttag);
      const From* in = x.data<From>();
      To* out = y.data<To>();
      const int64_t n = x.numel();
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<To, std::string>) {
          out[i] = ToString(in[i]);
        } else if constexpr (std::is_same_v<From, std::string>) {
          if (!FromString(in[i], out[i])) {
            err = ctx.Error("cannot parse '" + in[i] + "' as " + DTypeName(to));
            return;
          }
        } else {
          out[i] = ConvertNumber<To>(in[i]);
        }
      }
    });
    if (!s2.ok()) err = s2;
  });
  if (!s.ok()) return ctx.Unsupported(s.message());
  if (!err.ok()) return err.message().find(ctx.node().Describe()) == std::string::npos ? ctx.Unsupported(err.message()) : err;
  return ctx.SetOutput(0, y);
}

Status Cast(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::CastAttrs a, ops::ParseCast(ctx.node(), ctx.opset()));
  return CastTo(ctx, a.to);
}

Status CastLike(KernelContext& ctx) {
  const Tensor& like = ctx.input(1);
  if (!like.defined()) return ctx.Error("input 1 is missing or not a tensor");
  return CastTo(ctx, like.dtype());
}

}  // namespace

void RegisterElementwiseCastKernels(runtime::KernelRegistry& r) {
  r.Register("", "Cast", Cast);
  r.Register("", "CastLike", CastLike);
}

}  // namespace kiln::reference
