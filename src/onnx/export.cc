// ir::Model -> ONNX ModelProto (tensors inline as raw_data).
#include <fstream>

#include "onnx/onnx_io.h"
#include "onnx/proto_convert.h"

namespace kiln::onnx_io {
namespace {

void TypeToProto(const ir::TypeInfo& ti, onnx::TypeProto* tp) {
  switch (ti.kind) {
    case ir::TypeInfo::Kind::kTensor: {
      auto* tt = tp->mutable_tensor_type();
      tt->set_elem_type(static_cast<int>(ti.dtype));
      if (ti.shape) {
        auto* sh = tt->mutable_shape();
        for (const ir::Dim& d : *ti.shape) {
          auto* dp = sh->add_dim();
          if (d.known()) dp->set_dim_value(d.value);
          else if (!d.param.empty()) dp->set_dim_param(d.param);
        }
      }
      break;
    }
    case ir::TypeInfo::Kind::kSequence:
      if (ti.elem) TypeToProto(*ti.elem, tp->mutable_sequence_type()->mutable_elem_type());
      else tp->mutable_sequence_type();
      break;
    case ir::TypeInfo::Kind::kOptional:
      if (ti.elem) TypeToProto(*ti.elem, tp->mutable_optional_type()->mutable_elem_type());
      else tp->mutable_optional_type();
      break;
    case ir::TypeInfo::Kind::kUnknown: break;
  }
}

void ValueToProto(const ir::Value& v, onnx::ValueInfoProto* vp) {
  vp->set_name(v.name);
  if (v.type.kind != ir::TypeInfo::Kind::kUnknown) TypeToProto(v.type, vp->mutable_type());
}

void GraphToProto(const ir::Graph& g, onnx::GraphProto* gp);

void NodeToProto(const ir::Node& n, onnx::NodeProto* np) {
  np->set_name(n.name);
  np->set_op_type(n.op_type);
  if (!n.domain.empty()) np->set_domain(n.domain);
  if (!n.doc_string.empty()) np->set_doc_string(n.doc_string);
  for (const auto& i : n.inputs) np->add_input(i);
  for (const auto& o : n.outputs) np->add_output(o);
  for (const auto& [name, a] : n.attrs) {
    auto* ap = np->add_attribute();
    ap->set_name(name);
    ap->set_type(static_cast<onnx::AttributeProto::AttributeType>(a.type));
    if (!a.ref_attr_name.empty()) ap->set_ref_attr_name(a.ref_attr_name);
    switch (a.type) {
      case ir::Attribute::Type::kFloat: ap->set_f(a.f); break;
      case ir::Attribute::Type::kInt: ap->set_i(a.i); break;
      case ir::Attribute::Type::kString: ap->set_s(a.s); break;
      case ir::Attribute::Type::kTensor: TensorToProto(a.t, "", ap->mutable_t()); break;
      case ir::Attribute::Type::kSparseTensor:  // stored dense: write back as a dense tensor
        ap->set_type(onnx::AttributeProto::TENSOR);
        TensorToProto(a.t, "", ap->mutable_t());
        break;
      case ir::Attribute::Type::kGraph: if (a.g) GraphToProto(*a.g, ap->mutable_g()); break;  // none: a ref_attr_name
      case ir::Attribute::Type::kFloats: for (float f : a.floats) ap->add_floats(f); break;
      case ir::Attribute::Type::kInts: for (int64_t i : a.ints) ap->add_ints(i); break;
      case ir::Attribute::Type::kStrings: for (const auto& s : a.strings) ap->add_strings(s); break;
      case ir::Attribute::Type::kTensors: for (const auto& t : a.tensors) TensorToProto(t, "", ap->add_tensors()); break;
      case ir::Attribute::Type::kGraphs: for (const auto& sg : a.graphs) GraphToProto(*sg, ap->add_graphs()); break;
      case ir::Attribute::Type::kTypeProto: TypeToProto(a.tp, ap->mutable_tp()); break;
      case ir::Attribute::Type::kTypeProtos: for (const auto& t : a.tps) TypeToProto(t, ap->add_type_protos()); break;
      default: break;
    }
  }
}

void GraphToProto(const ir::Graph& g, onnx::GraphProto* gp) {
  gp->set_name(g.name);
  if (!g.doc_string.empty()) gp->set_doc_string(g.doc_string);
  for (const auto& [name, t] : g.initializers) TensorToProto(t, name, gp->add_initializer());
  for (const auto& v : g.inputs) ValueToProto(v, gp->add_input());
  for (const auto& v : g.outputs) ValueToProto(v, gp->add_output());
  for (const auto& [name, v] : g.value_info) ValueToProto(v, gp->add_value_info());
  for (const auto& n : g.nodes) NodeToProto(n, gp->add_node());
}

}  // namespace

Result<std::string> SerializeModel(const ir::Model& m) {
  onnx::ModelProto mp;
  mp.set_ir_version(m.ir_version);
  mp.set_producer_name(m.producer_name.empty() ? "kiln" : m.producer_name);
  mp.set_producer_version(m.producer_version);
  mp.set_domain(m.domain);
  mp.set_model_version(m.model_version);
  mp.set_doc_string(m.doc_string);
  for (const auto& [d, v] : m.opsets) {
    auto* op = mp.add_opset_import();
    op->set_domain(d);
    op->set_version(v);
  }
  for (const auto& [k, v] : m.metadata) {
    auto* kv = mp.add_metadata_props();
    kv->set_key(k);
    kv->set_value(v);
  }
  for (const auto& f : m.functions) {
    auto* fp = mp.add_functions();
    fp->set_name(f.name);
    fp->set_domain(f.domain);
    for (const auto& s : f.inputs) fp->add_input(s);
    for (const auto& s : f.outputs) fp->add_output(s);
    for (const auto& s : f.attributes) fp->add_attribute(s);
    for (const auto& n : f.nodes) NodeToProto(n, fp->add_node());
    for (const auto& o : f.opsets) {
      auto* op = fp->add_opset_import();
      op->set_domain(o.domain);
      op->set_version(o.version);
    }
  }
  GraphToProto(m.graph, mp.mutable_graph());
  std::string out;
  if (!mp.SerializeToString(&out)) return Internal("failed to serialize the model (larger than 2 GiB?)");
  return out;
}

Status SaveModelFile(const ir::Model& m, const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, SerializeModel(m));
  std::ofstream out(path, std::ios::binary);
  if (!out) return IoError("cannot write model file '" + path + "'");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) return IoError("failed writing model file '" + path + "'");
  return Status::Ok();
}

}  // namespace kiln::onnx_io
