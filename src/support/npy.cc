#include "support/npy.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace kiln::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct DescrInfo {
  DType dtype;
  size_t itemsize;  // for strings: 4 * the number of UTF-32 code units
};

Result<DescrInfo> ParseDescr(const std::string& d, const std::string& what) {
  if (d.size() < 3) return InvalidArgument(what + ": unsupported dtype descr '" + d + "'");
  const char order = d[0];
  const char kind = d[1];
  const std::string size_str = d.substr(2);
  for (char c : size_str)
    if (!std::isdigit(static_cast<unsigned char>(c))) return InvalidArgument(what + ": unsupported dtype descr '" + d + "'");
  if (size_str.size() > 9) return InvalidArgument(what + ": dtype descr '" + d + "' has an absurd item size");
  const size_t size = std::stoul(size_str);
  if (order != '<' && order != '|' && order != '=' && order != '>')
    return InvalidArgument(what + ": dtype descr '" + d + "' has an unknown byte order '" + std::string(1, order) + "'");
  // '>' is only harmless for one-byte types, where byte order does not apply.
  if (order == '>' && size != 1)
    return Unimplemented(what + ": big-endian data ('" + d + "') is not supported; save it little-endian");
  DType t = DType::kUndefined;
  switch (kind) {
    case 'f':
      t = size == 2 ? DType::kFloat16 : size == 4 ? DType::kFloat32 : size == 8 ? DType::kFloat64 : DType::kUndefined;
      break;
    case 'i':
      t = size == 1 ? DType::kInt8 : size == 2 ? DType::kInt16 : size == 4 ? DType::kInt32 : size == 8 ? DType::kInt64 : DType::kUndefined;
      break;
    case 'u':
      t = size == 1 ? DType::kUint8 : size == 2 ? DType::kUint16 : size == 4 ? DType::kUint32 : size == 8 ? DType::kUint64 : DType::kUndefined;
      break;
    case 'b':
      t = size == 1 ? DType::kBool : DType::kUndefined;
      break;
    case 'U':
      if (size == 0) return InvalidArgument(what + ": string dtype '" + d + "' has zero width");
      return DescrInfo{DType::kString, size * 4};
    default: break;
  }
  if (t == DType::kUndefined)
    return Unimplemented(what + ": dtype descr '" + d + "' has no kiln equivalent (supported: f2 f4 f8 i1-i8 u1-u8 b1 U)");
  return DescrInfo{t, size};
}

// A tiny reader for the Python dict literal of the header:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }
class HeaderParser {
 public:
  HeaderParser(const std::string& s, const std::string& what) : s_(s), what_(what) {}

  Status Parse(std::string* descr, bool* fortran, Shape* shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    SkipSpace();
    if (!Eat('{')) return Fail("header does not start with '{'");
    while (true) {
      SkipSpace();
      if (Eat('}')) break;
      std::string key;
      KILN_RETURN_IF_ERROR(ReadString(&key));
      SkipSpace();
      if (!Eat(':')) return Fail("expected ':' after key '" + key + "'");
      SkipSpace();
      if (key == "descr") {
        if (Peek() == '[') return Unimplemented(what_ + ": structured dtypes (descr is a list) are not supported");
        KILN_RETURN_IF_ERROR(ReadString(descr));
        have_descr = true;
      } else if (key == "fortran_order") {
        KILN_RETURN_IF_ERROR(ReadBool(fortran));
        have_fortran = true;
      } else if (key == "shape") {
        KILN_RETURN_IF_ERROR(ReadTuple(shape));
        have_shape = true;
      } else {
        return Fail("unexpected header key '" + key + "'");
      }
      SkipSpace();
      if (Eat(',')) continue;
      SkipSpace();
      if (Eat('}')) break;
      return Fail("expected ',' or '}' in header");
    }
    if (!have_descr || !have_fortran || !have_shape)
      return Fail(std::string("header lacks '") + (!have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape") + "'");
    return Status::Ok();
  }

 private:
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  Status Fail(const std::string& m) const {
    return InvalidArgument(what_ + ": malformed .npy header (" + m + " at offset " + std::to_string(pos_) + ")");
  }
  Status ReadString(std::string* out) {
    const char q = Peek();
    if (q != '\'' && q != '"') return Fail("expected a quoted string");
    ++pos_;
    const size_t end = s_.find(q, pos_);
    if (end == std::string::npos) return Fail("unterminated string");
    *out = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return Status::Ok();
  }
  Status ReadBool(bool* out) {
    if (s_.compare(pos_, 4, "True") == 0) { *out = true; pos_ += 4; return Status::Ok(); }
    if (s_.compare(pos_, 5, "False") == 0) { *out = false; pos_ += 5; return Status::Ok(); }
    return Fail("expected True or False");
  }
  Status ReadTuple(Shape* out) {
    out->clear();
    if (!Eat('(')) return Fail("expected '(' for shape");
    while (true) {
      SkipSpace();
      if (Eat(')')) return Status::Ok();
      size_t start = pos_;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
      if (start == pos_) return Fail("expected a non-negative integer in shape");
      if (pos_ - start > 18) return Fail("shape dimension too large");
      out->push_back(std::stoll(s_.substr(start, pos_ - start)));
      Eat('L');  // Python 2 longs
      SkipSpace();
      if (Eat(',')) continue;
      SkipSpace();
      if (Eat(')')) return Status::Ok();
      return Fail("expected ',' or ')' in shape");
    }
  }

  const std::string& s_;
  const std::string& what_;
  size_t pos_ = 0;
};

uint32_t ReadLe32(const unsigned char* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24); }

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

Result<std::vector<uint32_t>> DecodeUtf8(const std::string& s) {
  std::vector<uint32_t> cps;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (extra < 0 || (extra > 0 && i + static_cast<size_t>(extra) >= s.size()))
      return InvalidArgument("string is not valid UTF-8");
    uint32_t cp = extra == 0 ? c : extra == 1 ? (c & 0x1F) : extra == 2 ? (c & 0x0F) : (c & 0x07);
    for (int k = 1; k <= extra; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
      if ((cc >> 6) != 0x2) return InvalidArgument("string is not valid UTF-8");
      cp = (cp << 6) | (cc & 0x3F);
    }
    cps.push_back(cp);
    i += static_cast<size_t>(extra) + 1;
  }
  return cps;
}

}  // namespace

Result<std::string> DescrFor(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return std::string("<f2");
    case DType::kFloat32: return std::string("<f4");
    case DType::kFloat64: return std::string("<f8");
    case DType::kInt8: return std::string("|i1");
    case DType::kInt16: return std::string("<i2");
    case DType::kInt32: return std::string("<i4");
    case DType::kInt64: return std::string("<i8");
    case DType::kUint8: return std::string("|u1");
    case DType::kUint16: return std::string("<u2");
    case DType::kUint32: return std::string("<u4");
    case DType::kUint64: return std::string("<u8");
    case DType::kBool: return std::string("|b1");
    case DType::kBFloat16:
      return Unimplemented("bfloat16 has no NumPy .npy dtype; convert the tensor to float32 first");
    default: return Unimplemented(std::string("dtype ") + DTypeName(dtype) + " cannot be stored in a .npy file");
  }
}

Result<Tensor> Parse(const std::string& bytes, const std::string& what) {
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < kMagicLen + 2 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    return InvalidArgument(what + ": not a .npy file (missing the \\x93NUMPY magic)");
  const int major = u[6];
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    if (bytes.size() < 10) return InvalidArgument(what + ": truncated .npy header");
    header_len = u[8] | (u[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return InvalidArgument(what + ": truncated .npy header");
    header_len = ReadLe32(u + 8);
    header_start = 12;
  } else {
    return Unimplemented(what + ": .npy format version " + std::to_string(major) + "." + std::to_string(u[7]) + " is not supported (1.0-3.0 are)");
  }
  if (header_len > bytes.size() - header_start)
    return InvalidArgument(what + ": truncated .npy header (declares " + std::to_string(header_len) + " bytes, file has " +
                           std::to_string(bytes.size() - header_start) + ")");
  const std::string header = bytes.substr(header_start, header_len);
  std::string descr;
  bool fortran = false;
  Shape shape;
  KILN_RETURN_IF_ERROR(HeaderParser(header, what).Parse(&descr, &fortran, &shape));
  if (fortran) return Unimplemented(what + ": fortran_order=True arrays are not supported; save a C-order array");
  KILN_ASSIGN_OR_RETURN(DescrInfo info, ParseDescr(descr, what));
  auto count = CheckedElementCount(shape);
  if (!count.ok()) return count.status().WithContext(what);
  const size_t data_start = header_start + header_len;
  const size_t have = bytes.size() - data_start;
  const uint64_t n = static_cast<uint64_t>(*count);
  if (info.itemsize != 0 && n > have / info.itemsize)
    return InvalidArgument(what + ": data is truncated: shape " + ShapeToString(shape) + " of '" + descr + "' needs " +
                           std::to_string(n) + " x " + std::to_string(info.itemsize) + " bytes, the file holds " + std::to_string(have));
  const size_t need = static_cast<size_t>(n) * info.itemsize;
  if (have != need)
    return InvalidArgument(what + ": " + std::to_string(have - need) + " unexpected bytes after the data of shape " + ShapeToString(shape));
  auto alloc = Tensor::Allocate(info.dtype, shape);
  if (!alloc.ok()) return alloc.status().WithContext(what);
  Tensor t = std::move(alloc).value();
  const char* src = bytes.data() + data_start;
  if (info.dtype == DType::kString) {
    const size_t units = info.itemsize / 4;
    std::string* out = t.data<std::string>();
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      const auto* e = reinterpret_cast<const unsigned char*>(src + i * info.itemsize);
      std::string s;
      for (size_t k = 0; k < units; ++k) {
        uint32_t cp = ReadLe32(e + 4 * k);
        if (cp == 0) break;  // NumPy pads with NULs
        if (cp > 0x10FFFF) return InvalidArgument(what + ": element " + std::to_string(i) + " holds an invalid code point");
        AppendUtf8(s, cp);
      }
      out[i] = std::move(s);
    }
    return t;
  }
  if (need) std::memcpy(t.raw(), src, need);
  if (info.dtype == DType::kBool) {
    // Other bytes than 0/1 are not valid bool storage; normalize them.
    auto* b = static_cast<unsigned char*>(t.raw());
    for (size_t i = 0; i < need; ++i) b[i] = b[i] != 0;
  }
  return t;
}

Result<Tensor> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open .npy file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return Parse(ss.str(), "'" + path + "'");
}

Result<std::string> Serialize(const Tensor& src) {
  if (!src.defined()) return InvalidArgument("cannot write an undefined tensor to .npy");
  const Tensor t = src.Contiguous();
  std::string descr;
  size_t itemsize = 0;
  std::vector<std::vector<uint32_t>> utf32;
  if (t.dtype() == DType::kString) {
    size_t width = 1;
    const std::string* s = t.data<std::string>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      auto cps = DecodeUtf8(s[i]);
      if (!cps.ok()) return cps.status().WithContext("string element " + std::to_string(i));
      width = std::max(width, cps->size());
      utf32.push_back(std::move(cps).value());
    }
    descr = "<U" + std::to_string(width);
    itemsize = 4 * width;
  } else {
    KILN_ASSIGN_OR_RETURN(descr, DescrFor(t.dtype()));
    itemsize = DTypeSize(t.dtype());
  }
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape()[i]);
  shape += t.shape().size() == 1 ? ",)" : ")";
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces and a final newline so the data starts 64-byte aligned.
  auto build = [&](int major) {
    const size_t prefix = major == 1 ? 10 : 12;
    size_t total = prefix + dict.size() + 1;
    size_t pad = (64 - total % 64) % 64;
    std::string header = dict + std::string(pad, ' ') + "\n";
    std::string out(kMagic, kMagicLen);
    out += static_cast<char>(major);
    out += '\0';
    const size_t len = header.size();
    out += static_cast<char>(len & 0xFF);
    out += static_cast<char>((len >> 8) & 0xFF);
    if (major != 1) {
      out += static_cast<char>((len >> 16) & 0xFF);
      out += static_cast<char>((len >> 24) & 0xFF);
    }
    return out + header;
  };
  std::string out = dict.size() + 11 + 63 <= 65535 ? build(1) : build(2);
  const size_t data_start = out.size();
  out.resize(data_start + static_cast<size_t>(t.numel()) * itemsize, '\0');
  if (t.dtype() == DType::kString) {
    for (size_t i = 0; i < utf32.size(); ++i)
      for (size_t k = 0; k < utf32[i].size(); ++k) {
        char* p = out.data() + data_start + i * itemsize + 4 * k;
        const uint32_t cp = utf32[i][k];
        p[0] = static_cast<char>(cp & 0xFF);
        p[1] = static_cast<char>((cp >> 8) & 0xFF);
        p[2] = static_cast<char>((cp >> 16) & 0xFF);
        p[3] = static_cast<char>((cp >> 24) & 0xFF);
      }
  } else if (t.nbytes()) {
    std::memcpy(out.data() + data_start, t.raw(), t.nbytes());
  }
  return out;
}

Status WriteFile(const std::string& path, const Tensor& t) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, Serialize(t));
  std::ofstream out(path, std::ios::binary);
  if (!out) return IoError("cannot write .npy file '" + path + "'");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return IoError("failed writing .npy file '" + path + "'");
  return Status::Ok();
}

}  // namespace kiln::npy
