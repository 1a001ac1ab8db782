#include "support/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

namespace kiln::npy {
namespace {

std::string Header(int major, const std::string& dict) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const size_t len = dict.size();
  out += static_cast<char>(len & 0xFF);
  out += static_cast<char>(len >> 8);
  if (major >= 2) out += std::string(2, '\0');
  return out + dict;
}

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// The exact bytes NumPy 1.24 writes for np.save(np.array([[1,2,3],[4,5,6]], '<f4')).
TEST(Npy, SerializeMatchesNumPyBytes) {
  Tensor t = Tensor::FromVector<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto s = Serialize(t);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  dict += std::string(118 - 1 - dict.size(), ' ') + "\n";
  std::string expected = Header(1, dict) + Bytes(std::vector<float>{1, 2, 3, 4, 5, 6});
  EXPECT_EQ(*s, expected);
  EXPECT_EQ(s->size(), 128u + 24u);  // 128-byte header (64-byte aligned), then 24 data bytes
}

TEST(Npy, RoundTripEveryDType) {
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt8, DType::kInt16, DType::kInt32,
                   DType::kInt64, DType::kUint8, DType::kUint16, DType::kUint32, DType::kUint64, DType::kBool}) {
    Tensor t = Tensor::Zeros(dt, {2, 3});
    for (int64_t i = 0; i < 6; ++i) t.SetFromDouble(i, dt == DType::kBool ? (i % 2) : static_cast<double>(i + 1));
    auto s = Serialize(t);
    ASSERT_TRUE(s.ok()) << DTypeName(dt) << ": " << s.status().ToString();
    auto back = Parse(*s);
    ASSERT_TRUE(back.ok()) << DTypeName(dt) << ": " << back.status().ToString();
    EXPECT_EQ(back->dtype(), dt);
    EXPECT_EQ(back->shape(), (Shape{2, 3}));
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(back->GetAsDouble(i), t.GetAsDouble(i)) << DTypeName(dt) << " element " << i;
  }
}

TEST(Npy, DescrNames) {
  EXPECT_EQ(*DescrFor(DType::kFloat16), "<f2");
  EXPECT_EQ(*DescrFor(DType::kBool), "|b1");
  EXPECT_EQ(*DescrFor(DType::kUint8), "|u1");
  EXPECT_EQ(*DescrFor(DType::kInt64), "<i8");
  EXPECT_FALSE(DescrFor(DType::kBFloat16).ok());
}

TEST(Npy, ScalarAndEmptyShapes) {
  Tensor scalar = Tensor::Scalar(2.5f);
  auto s = Serialize(scalar);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->find("'shape': ()"), std::string::npos);
  auto back = Parse(*s);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->rank(), 0);
  EXPECT_EQ(back->data<float>()[0], 2.5f);

  Tensor vec = Tensor::Zeros(DType::kInt32, {3});
  s = Serialize(vec);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->find("'shape': (3,)"), std::string::npos);

  Tensor empty = Tensor::Zeros(DType::kFloat32, {0, 4});
  back = Parse(*Serialize(empty));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->shape(), (Shape{0, 4}));
}

TEST(Npy, ReadsVersion2HeaderAndDoubleQuotes) {
  std::string dict = "{\"descr\": \"<i2\", \"fortran_order\": False, \"shape\": (3,)}\n";
  std::string bytes = Header(2, dict) + Bytes(std::vector<int16_t>{-1, 0, 7});
  auto t = Parse(bytes);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->dtype(), DType::kInt16);
  EXPECT_EQ(t->data<int16_t>()[0], -1);
  EXPECT_EQ(t->data<int16_t>()[2], 7);
}

TEST(Npy, NativeOrderAndOneByteBigEndianAccepted) {
  auto t = Parse(Header(1, "{'descr': '=f4', 'fortran_order': False, 'shape': (1,), }\n") + Bytes(std::vector<float>{3}));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->data<float>()[0], 3.0f);
  t = Parse(Header(1, "{'descr': '>u1', 'fortran_order': False, 'shape': (2,), }\n") + "\x05\x06");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->data<uint8_t>()[1], 6);
}

TEST(Npy, StringsRoundTripAsUtf32) {
  Tensor t = Tensor::FromVector<std::string>(DType::kString, {2}, {"ab", "\xc3\xa9xyz"});
  auto s = Serialize(t);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_NE(s->find("'<U4'"), std::string::npos);
  auto back = Parse(*s);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->data<std::string>()[0], "ab");
  EXPECT_EQ(back->data<std::string>()[1], "\xc3\xa9xyz");
}

TEST(Npy, BoolBytesAreNormalized) {
  auto t = Parse(Header(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }\n") + std::string("\x00\x07", 2));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->GetAsDouble(1), 1.0);
}

TEST(Npy, WritesNonContiguousViewsInCOrder) {
  Tensor t = Tensor::FromVector<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor tr = t.Permuted({1, 0});
  auto back = Parse(*Serialize(tr));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->shape(), (Shape{3, 2}));
  std::vector<float> want = {1, 4, 2, 5, 3, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(back->data<float>()[i], want[static_cast<size_t>(i)]);
}

struct BadCase {
  const char* label;
  std::string bytes;
  const char* expect;  // substring of the message
};

TEST(Npy, MalformedFilesGiveClearErrors) {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  const std::string data = Bytes(std::vector<float>{1, 2});
  std::vector<BadCase> cases = {
      {"empty", "", "missing the \\x93NUMPY magic"},
      {"not npy", "hello world, not numpy", "missing the \\x93NUMPY magic"},
      {"version", std::string("\x93NUMPY\x07\x00\x10\x00", 10), "format version 7.0"},
      {"header truncated", Header(1, ok_dict).substr(0, 30), "truncated .npy header"},
      {"data truncated", Header(1, ok_dict) + data.substr(0, 5), "data is truncated"},
      {"trailing bytes", Header(1, ok_dict) + data + "xx", "unexpected bytes"},
      {"fortran", Header(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }\n") + data, "fortran_order=True"},
      {"big endian", Header(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n") + data, "big-endian"},
      {"complex", Header(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }\n") + data, "no kiln equivalent"},
      {"structured", Header(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n"), "structured"},
      {"object", Header(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }\n"), "unsupported dtype descr"},
      {"no shape", Header(1, "{'descr': '<f4', 'fortran_order': False}\n"), "lacks 'shape'"},
      {"bad shape", Header(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }\n"), "non-negative integer"},
      {"unknown key", Header(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n"), "unexpected header key"},
      {"unterminated", Header(1, "{'descr': '<f4"), "unterminated string"},
      {"overflow", Header(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }\n"),
       "overflows"},
  };
  for (const auto& c : cases) {
    auto t = Parse(c.bytes, "case");
    ASSERT_FALSE(t.ok()) << c.label;
    EXPECT_NE(t.status().message().find(c.expect), std::string::npos) << c.label << ": " << t.status().message();
  }
}

TEST(Npy, FileErrorsNameThePath) {
  auto t = ReadFile("/nonexistent/dir/x.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("/nonexistent/dir/x.npy"), std::string::npos);
  const std::string path = (std::filesystem::temp_directory_path() / "kiln_npy_test.npy").string();
  ASSERT_TRUE(WriteFile(path, Tensor::Scalar(1.0f)).ok());
  auto back = ReadFile(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->data<float>()[0], 1.0f);
  std::filesystem::remove(path);
  EXPECT_FALSE(WriteFile("/nonexistent/dir/x.npy", Tensor::Scalar(1.0f)).ok());
}

}  // namespace
}  // namespace kiln::npy
