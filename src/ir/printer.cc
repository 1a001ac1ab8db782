// Text form of the IR: one line per node, `%out = Op(%in, ...) {attrs}`.
#include <sstream>

#include "ir/graph.h"

namespace kiln::ir {
namespace {

std::string AttrToText(const Attribute& a, int indent) {
  std::ostringstream os;
  auto list = [&](const auto& v) {
    os << "[";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
    os << "]";
  };
  switch (a.type) {
    case Attribute::Type::kFloat: os << a.f; break;
    case Attribute::Type::kInt: os << a.i; break;
    case Attribute::Type::kString: os << '"' << a.s << '"'; break;
    case Attribute::Type::kTensor: os << a.t.Describe(); break;
    case Attribute::Type::kGraph: os << "\n" << ToText(*a.g, indent + 4); break;
    case Attribute::Type::kFloats: list(a.floats); break;
    case Attribute::Type::kInts: list(a.ints); break;
    case Attribute::Type::kStrings: list(a.strings); break;
    case Attribute::Type::kTypeProto: os << a.tp.ToString(); break;
    default: os << "<" << AttributeTypeName(a.type) << ">"; break;
  }
  return os.str();
}

}  // namespace

std::string ToText(const Graph& g, int indent) {
  std::ostringstream os;
  std::string pad(static_cast<size_t>(indent), ' ');
  os << pad << "graph " << (g.name.empty() ? "<unnamed>" : g.name) << " (";
  bool first = true;
  for (const Value& v : g.inputs) {
    if (g.IsInitializer(v.name)) continue;
    os << (first ? "" : ", ") << "%" << v.name << ": " << v.type.ToString();
    first = false;
  }
  os << ") -> (";
  for (size_t i = 0; i < g.outputs.size(); ++i)
    os << (i ? ", " : "") << "%" << g.outputs[i].name << ": " << g.outputs[i].type.ToString();
  os << ")\n";
  for (const auto& [n, t] : g.initializers) os << pad << "  init %" << n << ": " << t.Describe() << "\n";
  for (const Node& n : g.nodes) {
    os << pad << "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i) os << (i ? ", " : "") << "%" << n.outputs[i];
    os << " = " << (n.domain.empty() ? "" : n.domain + ".") << n.op_type << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << (n.inputs[i].empty() ? "_" : "%" + n.inputs[i]);
    os << ")";
    if (!n.attrs.empty()) {
      os << " {";
      bool f = true;
      for (const auto& [an, a] : n.attrs) {
        os << (f ? "" : ", ") << an << "=" << AttrToText(a, indent);
        f = false;
      }
      os << "}";
    }
    if (!n.name.empty()) os << "  # " << n.name;
    os << "\n";
  }
  return os.str();
}

std::string ToText(const Model& m) {
  std::ostringstream os;
  os << "model ir_version=" << m.ir_version << " opsets={";
  bool f = true;
  for (const auto& [d, v] : m.opsets) {
    os << (f ? "" : ", ") << (d.empty() ? "ai.onnx" : d) << ":" << v;
    f = false;
  }
  os << "}\n" << ToText(m.graph);
  return os.str();
}

}  // namespace kiln::ir
