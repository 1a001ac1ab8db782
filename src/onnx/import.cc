// ONNX ModelProto -> ir::Model.
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "onnx/onnx_io.h"
#include "onnx/proto_convert.h"

namespace kiln::onnx_io {
namespace {

namespace fs = std::filesystem;

Result<ir::TypeInfo> TypeFromProto(const onnx::TypeProto& tp) {
  ir::TypeInfo ti;
  if (tp.has_tensor_type()) {
    const auto& tt = tp.tensor_type();
    ti.kind = ir::TypeInfo::Kind::kTensor;
    ti.dtype = DTypeIsKnown(tt.elem_type()) || tt.elem_type() == 0 ? static_cast<DType>(tt.elem_type()) : DType::kUndefined;
    if (tt.has_shape()) {
      ir::Dims dims;
      for (const auto& d : tt.shape().dim()) {
        if (d.has_dim_value()) dims.push_back(ir::Dim::Known(d.dim_value()));
        else if (d.has_dim_param()) dims.push_back(ir::Dim::Symbol(d.dim_param()));
        else dims.push_back(ir::Dim{});
      }
      ti.shape = dims;
    }
  } else if (tp.has_sequence_type()) {
    ti.kind = ir::TypeInfo::Kind::kSequence;
    KILN_ASSIGN_OR_RETURN(ir::TypeInfo e, TypeFromProto(tp.sequence_type().elem_type()));
    ti.elem = std::make_shared<ir::TypeInfo>(std::move(e));
  } else if (tp.has_optional_type()) {
    ti.kind = ir::TypeInfo::Kind::kOptional;
    KILN_ASSIGN_OR_RETURN(ir::TypeInfo e, TypeFromProto(tp.optional_type().elem_type()));
    ti.elem = std::make_shared<ir::TypeInfo>(std::move(e));
  }
  return ti;
}

Result<ir::Value> ValueFromProto(const onnx::ValueInfoProto& vi) {
  ir::Value v;
  v.name = vi.name();
  if (vi.has_type()) {
    auto t = TypeFromProto(vi.type());
    if (!t.ok()) return t.status().WithContext("value '" + vi.name() + "'");
    v.type = std::move(t).value();
  }
  return v;
}

Result<std::shared_ptr<ir::Graph>> GraphFromProto(const onnx::GraphProto& gp, const std::string& model_dir);

Result<ir::Attribute> AttrFromProto(const onnx::AttributeProto& ap, const std::string& model_dir) {
  ir::Attribute a;
  a.name = ap.name();
  a.ref_attr_name = ap.ref_attr_name();
  a.type = static_cast<ir::Attribute::Type>(ap.type());
  // Old models leave `type` unset; infer it from the populated field.
  if (ap.type() == onnx::AttributeProto::UNDEFINED) {
    if (ap.has_f()) a.type = ir::Attribute::Type::kFloat;
    else if (ap.has_i()) a.type = ir::Attribute::Type::kInt;
    else if (ap.has_s()) a.type = ir::Attribute::Type::kString;
    else if (ap.has_t()) a.type = ir::Attribute::Type::kTensor;
    else if (ap.has_g()) a.type = ir::Attribute::Type::kGraph;
    else if (ap.floats_size()) a.type = ir::Attribute::Type::kFloats;
    else if (ap.ints_size()) a.type = ir::Attribute::Type::kInts;
    else if (ap.strings_size()) a.type = ir::Attribute::Type::kStrings;
    else if (ap.tensors_size()) a.type = ir::Attribute::Type::kTensors;
    else if (ap.graphs_size()) a.type = ir::Attribute::Type::kGraphs;
  }
  a.f = ap.f();
  a.i = ap.i();
  a.s = ap.s();
  if (ap.has_t()) { KILN_ASSIGN_OR_RETURN(a.t, TensorFromProto(ap.t(), model_dir)); }
  if (ap.has_sparse_tensor()) {
    KILN_ASSIGN_OR_RETURN(a.t, SparseTensorFromProto(ap.sparse_tensor(), model_dir));
  }
  if (ap.has_g()) { KILN_ASSIGN_OR_RETURN(a.g, GraphFromProto(ap.g(), model_dir)); }
  else if (a.type == ir::Attribute::Type::kGraph && a.ref_attr_name.empty())
    return InvalidModel("attribute '" + a.name + "' is of type GRAPH but holds no graph");
  if (ap.has_tp()) { KILN_ASSIGN_OR_RETURN(a.tp, TypeFromProto(ap.tp())); }
  a.floats.assign(ap.floats().begin(), ap.floats().end());
  a.ints.assign(ap.ints().begin(), ap.ints().end());
  for (const auto& s : ap.strings()) a.strings.push_back(s);
  for (const auto& t : ap.tensors()) {
    KILN_ASSIGN_OR_RETURN(Tensor x, TensorFromProto(t, model_dir));
    a.tensors.push_back(std::move(x));
  }
  for (const auto& g : ap.graphs()) {
    KILN_ASSIGN_OR_RETURN(auto x, GraphFromProto(g, model_dir));
    a.graphs.push_back(std::move(x));
  }
  for (const auto& t : ap.type_protos()) {
    KILN_ASSIGN_OR_RETURN(ir::TypeInfo x, TypeFromProto(t));
    a.tps.push_back(std::move(x));
  }
  return a;
}

Result<ir::Node> NodeFromProto(const onnx::NodeProto& np, const std::string& model_dir) {
  ir::Node n;
  n.name = np.name();
  n.op_type = np.op_type();
  n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
  n.doc_string = np.doc_string();
  for (const auto& i : np.input()) n.inputs.push_back(i);
  for (const auto& o : np.output()) n.outputs.push_back(o);
  for (const auto& ap : np.attribute()) {
    auto a = AttrFromProto(ap, model_dir);
    if (!a.ok()) return a.status().WithContext(n.Describe() + ": attribute '" + ap.name() + "'");
    n.attrs[ap.name()] = std::move(a).value();
  }
  return n;
}

Result<std::shared_ptr<ir::Graph>> GraphFromProto(const onnx::GraphProto& gp, const std::string& model_dir) {
  auto g = std::make_shared<ir::Graph>();
  g->name = gp.name();
  g->doc_string = gp.doc_string();
  for (const auto& t : gp.initializer()) {
    auto x = TensorFromProto(t, model_dir);
    if (!x.ok()) return x.status().WithContext("initializer '" + t.name() + "'");
    g->initializers[t.name()] = std::move(x).value();
  }
  for (const auto& st : gp.sparse_initializer()) {
    auto x = SparseTensorFromProto(st, model_dir);
    if (!x.ok()) return x.status().WithContext("sparse initializer '" + st.values().name() + "'");
    g->initializers[st.values().name()] = std::move(x).value();
  }
  for (const auto& vi : gp.input()) { KILN_ASSIGN_OR_RETURN(ir::Value v, ValueFromProto(vi)); g->inputs.push_back(std::move(v)); }
  for (const auto& vi : gp.output()) { KILN_ASSIGN_OR_RETURN(ir::Value v, ValueFromProto(vi)); g->outputs.push_back(std::move(v)); }
  for (const auto& vi : gp.value_info()) {
    KILN_ASSIGN_OR_RETURN(ir::Value v, ValueFromProto(vi));
    g->value_info[v.name] = std::move(v);
  }
  // Unnamed nodes get a stable name so every error can point at one.
  int counter = 0;
  for (const auto& np : gp.node()) {
    KILN_ASSIGN_OR_RETURN(ir::Node n, NodeFromProto(np, model_dir));
    if (n.name.empty()) n.name = n.op_type + "_" + std::to_string(counter);
    ++counter;
    g->nodes.push_back(std::move(n));
  }
  return g;
}

// Every external data location named by a tensor of `gp`, its subgraphs
// included (no data is read).
void CollectExternalFiles(const onnx::GraphProto& gp, std::set<std::string>* out) {
  auto tensor = [&](const onnx::TensorProto& t) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return;
    for (const auto& kv : t.external_data())
      if (kv.key() == "location") out->insert(kv.value());
  };
  for (const auto& t : gp.initializer()) tensor(t);
  for (const auto& st : gp.sparse_initializer()) { tensor(st.values()); tensor(st.indices()); }
  for (const auto& np : gp.node())
    for (const auto& ap : np.attribute()) {
      if (ap.has_t()) tensor(ap.t());
      for (const auto& t : ap.tensors()) tensor(t);
      if (ap.has_g()) CollectExternalFiles(ap.g(), out);
      for (const auto& g : ap.graphs()) CollectExternalFiles(g, out);
    }
}

}  // namespace

Result<ir::Model> LoadModelBytes(const void* data, size_t size, const std::string& model_dir) {
  onnx::ModelProto mp;
  if (size > static_cast<size_t>(INT32_MAX)) return InvalidModel("model larger than 2 GiB must keep its weights as external data");
  if (!mp.ParseFromArray(data, static_cast<int>(size)))
    return InvalidModel("not a valid ONNX model: protobuf parsing failed (truncated or not a ModelProto)");
  if (!mp.has_graph() || mp.ir_version() <= 0)
    return InvalidModel("not an ONNX model: " + std::string(!mp.has_graph() ? "no graph" : "no ir_version"));
  ir::Model m;
  m.ir_version = mp.ir_version();
  m.producer_name = mp.producer_name();
  m.producer_version = mp.producer_version();
  m.domain = mp.domain();
  m.model_version = mp.model_version();
  m.doc_string = mp.doc_string();
  for (const auto& op : mp.opset_import()) {
    std::string d = op.domain() == "ai.onnx" ? "" : op.domain();
    m.opsets[d] = op.version();
  }
  // IR version 3+ requires opset_import; earlier models mean default opset 1.
  if (m.opsets.empty()) m.opsets[""] = 1;
  for (const auto& kv : mp.metadata_props()) m.metadata[kv.key()] = kv.value();
  for (const auto& fp : mp.functions()) {
    ir::Function f;
    f.name = fp.name();
    f.domain = fp.domain();
    f.inputs.assign(fp.input().begin(), fp.input().end());
    f.outputs.assign(fp.output().begin(), fp.output().end());
    f.attributes.assign(fp.attribute().begin(), fp.attribute().end());
    for (const auto& np : fp.node()) {
      KILN_ASSIGN_OR_RETURN(ir::Node n, NodeFromProto(np, model_dir));
      f.nodes.push_back(std::move(n));
    }
    for (const auto& op : fp.opset_import()) f.opsets.push_back({op.domain(), op.version()});
    m.functions.push_back(std::move(f));
  }
  KILN_ASSIGN_OR_RETURN(auto g, GraphFromProto(mp.graph(), model_dir));
  m.graph = std::move(*g);
  std::set<std::string> external;
  CollectExternalFiles(mp.graph(), &external);
  m.external_files.assign(external.begin(), external.end());
  return m;
}

Result<std::shared_ptr<Storage>> ReadModelFile(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound("model file '" + path + "' does not exist");
  if (fs::is_directory(path, ec)) return InvalidArgument("model path '" + path + "' is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open model file '" + path + "'");
  // One read of the known size into one (huge-page) buffer: a stringstream
  // copied the bytes twice and regrew as it went, which dominated loading a
  // 100 MB model.
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return IoError("cannot read the size of model file '" + path + "': " + ec.message());
  auto bytes = std::make_shared<Storage>(static_cast<size_t>(size), /*zero_fill=*/false);
  if (!in.read(static_cast<char*>(bytes->data()), static_cast<std::streamsize>(size)) ||
      static_cast<uintmax_t>(in.gcount()) != size)
    return IoError("cannot read model file '" + path + "' (" + std::to_string(size) + " bytes expected)");
  return bytes;
}

std::string ModelDir(const std::string& path) {
  std::error_code ec;
  return fs::absolute(fs::path(path), ec).parent_path().string();
}

Result<ir::Model> LoadModelFile(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Storage> bytes, ReadModelFile(path));
  auto m = LoadModelBytes(bytes->data(), bytes->bytes(), ModelDir(path));
  if (!m.ok()) return m.status().WithContext("'" + path + "'");
  return m;
}

}  // namespace kiln::onnx_io
