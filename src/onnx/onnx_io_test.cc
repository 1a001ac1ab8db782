#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "onnx/onnx_io.h"
#include "onnx/proto_convert.h"

namespace kiln::onnx_io {
namespace {

namespace fs = std::filesystem;

ir::Model SmallModel() {
  ir::Model m;
  m.opsets[""] = 17;
  m.opsets["com.example"] = 1;
  m.metadata["author"] = "kiln";
  m.graph.name = "g";
  m.graph.inputs.push_back({"x", ir::TypeInfo::Tensor(DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(3)})});
  m.graph.initializers["w"] = Tensor::FromVector<float>(DType::kFloat32, {3}, {1.5f, -2.f, 3.25f});
  m.graph.initializers["s"] = Tensor::FromVector<std::string>(DType::kString, {2}, {"a", "b"});
  ir::Node n;
  n.name = "add";
  n.op_type = "Add";
  n.inputs = {"x", "w"};
  n.outputs = {"y"};
  n.attrs["ints"] = ir::Attribute::Ints("ints", {1, -2});
  auto sub = std::make_shared<ir::Graph>();
  sub->name = "body";
  n.attrs["body"] = ir::Attribute::GraphValue("body", sub);
  m.graph.nodes.push_back(n);
  m.graph.outputs.push_back({"y", ir::TypeInfo::Tensor(DType::kFloat32)});
  return m;
}

TEST(OnnxIo, ExportImportRoundTrip) {
  ir::Model m = SmallModel();
  auto bytes = SerializeModel(m);
  ASSERT_TRUE(bytes.ok());
  auto back = LoadModelBytes(bytes->data(), bytes->size(), "");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->opsets.at(""), 17);
  EXPECT_EQ(back->opsets.at("com.example"), 1);
  EXPECT_EQ(back->metadata.at("author"), "kiln");
  EXPECT_EQ(ir::ToText(back->graph), ir::ToText(m.graph));
  const Tensor& w = back->graph.initializers.at("w");
  EXPECT_EQ(w.data<float>()[2], 3.25f);
  EXPECT_EQ(back->graph.initializers.at("s").data<std::string>()[1], "b");
  EXPECT_EQ(back->graph.inputs[0].type.shape->at(0).param, "N");
  ASSERT_TRUE(back->graph.nodes[0].attrs.at("body").g);
  EXPECT_EQ(back->graph.nodes[0].attrs.at("body").g->name, "body");
}

TEST(OnnxIo, TypedFieldsAreRead) {
  onnx::TensorProto tp;
  tp.set_name("h");
  tp.set_data_type(onnx::TensorProto::FLOAT16);
  tp.add_dims(2);
  tp.add_int32_data(0x3c00);  // 1.0
  tp.add_int32_data(0xc000);  // -2.0
  auto t = TensorFromProto(tp, "");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->GetAsDouble(0), 1.0);
  EXPECT_EQ(t->GetAsDouble(1), -2.0);
  tp.add_int32_data(0);  // now 3 values for 2 elements
  EXPECT_FALSE(TensorFromProto(tp, "").ok());
}

TEST(OnnxIo, RawDataOfWrongSizeIsAnError) {
  onnx::TensorProto tp;
  tp.set_name("bad");
  tp.set_data_type(onnx::TensorProto::FLOAT);
  tp.add_dims(4);
  tp.set_raw_data(std::string(12, '\0'));
  auto t = TensorFromProto(tp, "");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("'bad'"), std::string::npos);
}

class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_ext_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "model");
    std::ofstream(dir_ / "model" / "w.bin", std::ios::binary).write("\0\0\x80\x3f\0\0\0\x40", 8);  // 1.0f, 2.0f
    std::ofstream(dir_ / "outside.bin", std::ios::binary).write("\0\0\x80\x3f\0\0\0\x40", 8);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Result<ir::Model> Load(const std::string& location, int64_t length) {
    onnx::ModelProto mp;
    mp.set_ir_version(8);
    mp.add_opset_import()->set_version(17);
    auto* g = mp.mutable_graph();
    auto* t = g->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(2);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = t->add_external_data();
    kv->set_key("location");
    kv->set_value(location);
    if (length >= 0) {
      kv = t->add_external_data();
      kv->set_key("length");
      kv->set_value(std::to_string(length));
    }
    std::string path = (dir_ / "model" / "m.onnx").string();
    std::ofstream(path, std::ios::binary) << mp.SerializeAsString();
    return LoadModelFile(path);
  }
  fs::path dir_;
};

TEST_F(ExternalData, ReadsRelativeToTheModelFolder) {
  auto m = Load("w.bin", 8);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->graph.initializers.at("w").data<float>()[1], 2.0f);
}

TEST_F(ExternalData, PathEscapingTheFolderIsAnError) {
  auto m = Load("../outside.bin", 8);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("escapes"), std::string::npos) << m.status().ToString();
  auto abs = Load((dir_ / "outside.bin").string(), 8);
  ASSERT_FALSE(abs.ok());
  EXPECT_NE(abs.status().message().find("absolute"), std::string::npos);
}

TEST_F(ExternalData, ShorterThanDeclaredIsAnError) {
  std::ofstream(dir_ / "model" / "short.bin", std::ios::binary).write("\0\0\x80\x3f", 4);
  auto m = Load("short.bin", 8);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("shorter"), std::string::npos) << m.status().ToString();
  auto len = Load("w.bin", 4);  // length disagrees with the shape
  EXPECT_FALSE(len.ok());
}

TEST(OnnxIo, GarbageAndTruncationAreErrors) {
  std::string junk = "this is not a model at all";
  EXPECT_FALSE(LoadModelBytes(junk.data(), junk.size(), "").ok());
  auto bytes = SerializeModel(SmallModel());
  ASSERT_TRUE(bytes.ok());
  auto cut = LoadModelBytes(bytes->data(), bytes->size() / 2, "");
  EXPECT_FALSE(cut.ok());
  auto missing = LoadModelFile("/nonexistent/model.onnx");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace kiln::onnx_io
