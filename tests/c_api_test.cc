// The C API (include/kiln/kiln.h) over the seed model: metadata, a run whose
// output equals the C++ API's bit for bit, and errors as codes and messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "examples/seed.h"
#include "ir/builder.h"
#include "kiln/kiln.h"
#include "kiln/session.h"
#include "onnx/onnx_io.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

std::string SeedBytes() {
  examples::SeedOptions o;
  o.layout = examples::SeedLayout::kNchw;
  auto m = examples::BuildSeedModel(o);
  EXPECT_TRUE(m.ok());
  auto b = onnx_io::SerializeModel(*m);
  EXPECT_TRUE(b.ok());
  return *b;
}

TEST(CApi, MetadataRunAndAgreementWithCpp) {
  const std::string bytes = SeedBytes();
  kiln_session* s = nullptr;
  kiln_status* st = kiln_session_create_from_bytes(bytes.data(), bytes.size(), nullptr, &s);
  ASSERT_EQ(st, nullptr) << kiln_status_message(st);
  ASSERT_EQ(kiln_session_input_count(s), 1u);
  ASSERT_EQ(kiln_session_output_count(s), 1u);
  kiln_io_info in{};
  ASSERT_EQ(kiln_session_input_info(s, 0, &in), nullptr);
  EXPECT_STREQ(in.name, examples::kSeedInputName);
  EXPECT_STREQ(in.kind, "tensor");
  EXPECT_EQ(in.dtype, KILN_DTYPE_FLOAT32);
  ASSERT_EQ(in.rank, 4u);
  EXPECT_EQ(std::vector<int64_t>(in.shape, in.shape + 4), (std::vector<int64_t>{1, 3, 40, 40}));

  ir::SeededRng rng(3);
  auto x = ir::RandomTensor(DType::kFloat32, {1, 3, 40, 40}, rng, -1, 1);
  ASSERT_TRUE(x.ok());
  const int64_t shape[4] = {1, 3, 40, 40};
  kiln_tensor_view view = {examples::kSeedInputName, KILN_DTYPE_FLOAT32, shape, 4, x->raw(), x->nbytes()};
  kiln_outputs* out = nullptr;
  st = kiln_session_run(s, &view, 1, &out);
  ASSERT_EQ(st, nullptr) << kiln_status_message(st);
  ASSERT_EQ(kiln_outputs_count(out), 1u);
  EXPECT_STREQ(kiln_outputs_name(out, 0), examples::kSeedOutputName);
  EXPECT_EQ(kiln_outputs_dtype(out, 0), KILN_DTYPE_FLOAT32);
  ASSERT_EQ(kiln_outputs_rank(out, 0), 4u);
  EXPECT_EQ(kiln_outputs_element_count(out, 0), 32 * 20 * 20);

  auto cpp = Session::CreateFromBytes(bytes.data(), bytes.size());
  ASSERT_TRUE(cpp.ok());
  auto want = (*cpp)->Run({{examples::kSeedInputName, *x}});
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(kiln_outputs_data_bytes(out, 0), (*want)[0].nbytes());
  EXPECT_EQ(std::memcmp(kiln_outputs_data(out, 0), (*want)[0].raw(), (*want)[0].nbytes()), 0);

  std::vector<float> copy(32 * 20 * 20);
  ASSERT_EQ(kiln_outputs_copy_f32(out, 0, copy.data(), copy.size()), nullptr);
  EXPECT_EQ(copy[123], (*want)[0].data<float>()[123]);
  kiln_status* small = kiln_outputs_copy_f32(out, 0, copy.data(), 10);
  ASSERT_NE(small, nullptr);
  kiln_status_free(small);
  EXPECT_EQ(kiln_outputs_name(out, 5), nullptr);
  kiln_outputs_free(out);

  // The float32 convenience entry point gives the same result.
  st = kiln_session_run_f32(s, examples::kSeedInputName, x->data<float>(), shape, 4, &out);
  ASSERT_EQ(st, nullptr) << kiln_status_message(st);
  EXPECT_EQ(std::memcmp(kiln_outputs_data(out, 0), (*want)[0].raw(), (*want)[0].nbytes()), 0);
  kiln_outputs_free(out);
  kiln_session_free(s);
}

TEST(CApi, ErrorsAreCodesAndMessages) {
  kiln_session* s = nullptr;
  kiln_status* st = kiln_session_create("/nonexistent/model.onnx", nullptr, &s);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(kiln_status_code_of(st), KILN_NOT_FOUND);
  EXPECT_THAT(kiln_status_message(st), HasSubstr("/nonexistent/model.onnx"));
  kiln_status_free(st);
  EXPECT_EQ(s, nullptr);

  st = kiln_session_create_from_bytes("garbage", 7, nullptr, &s);
  ASSERT_NE(st, nullptr);
  EXPECT_NE(kiln_status_code_of(st), KILN_OK);
  kiln_status_free(st);

  kiln_session_options bad = {"warp-drive", nullptr, 0};
  const std::string bytes = SeedBytes();
  st = kiln_session_create_from_bytes(bytes.data(), bytes.size(), &bad, &s);
  ASSERT_NE(st, nullptr);
  EXPECT_THAT(kiln_status_message(st), HasSubstr("warp-drive"));
  kiln_status_free(st);

  ASSERT_EQ(kiln_session_create_from_bytes(bytes.data(), bytes.size(), nullptr, &s), nullptr);
  const int64_t shape[4] = {1, 3, 40, 40};
  std::vector<float> data(3 * 40 * 40);
  kiln_outputs* out = nullptr;
  // Byte count that does not match the shape.
  kiln_tensor_view short_view = {examples::kSeedInputName, KILN_DTYPE_FLOAT32, shape, 4, data.data(), 16};
  st = kiln_session_run(s, &short_view, 1, &out);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(kiln_status_code_of(st), KILN_INVALID_ARGUMENT);
  kiln_status_free(st);
  // Wrong input name.
  kiln_tensor_view named = {"nope", KILN_DTYPE_FLOAT32, shape, 4, data.data(), data.size() * 4};
  st = kiln_session_run(s, &named, 1, &out);
  ASSERT_NE(st, nullptr);
  EXPECT_THAT(kiln_status_message(st), HasSubstr("nope"));
  kiln_status_free(st);
  // Index out of range.
  kiln_io_info info{};
  st = kiln_session_input_info(s, 9, &info);
  ASSERT_NE(st, nullptr);
  kiln_status_free(st);
  EXPECT_EQ(out, nullptr);
  kiln_session_free(s);
  // NULL is fine everywhere it is documented to be.
  kiln_session_free(nullptr);
  kiln_outputs_free(nullptr);
  kiln_status_free(nullptr);
  EXPECT_EQ(kiln_status_code_of(nullptr), KILN_OK);
  EXPECT_STREQ(kiln_status_message(nullptr), "");
}

}  // namespace
}  // namespace kiln
