// kiln's graph IR: what an ONNX model means, independent of protobuf.
// A Graph owns Nodes (in file order), its inputs, outputs, initializers and
// value_info; Node inputs/outputs are value names ("" marks an omitted
// optional input). Subgraphs (If/Loop/Scan bodies) hang off attributes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ir {

// A dimension: a known size, or unknown with an optional symbolic name.
struct Dim {
  int64_t value = -1;
  std::string param;
  bool known() const { return value >= 0; }
  static Dim Known(int64_t v) { Dim d; d.value = v; return d; }
  static Dim Symbol(std::string p) { Dim d; d.param = std::move(p); return d; }
  bool operator==(const Dim& o) const { return value == o.value && param == o.param; }
};
using Dims = std::vector<Dim>;
std::string DimsToString(const Dims& dims);  // "[1,N,?,40]"
Dims DimsFromShape(const Shape& s);

// Type of a value: a tensor (dtype + optional shape), a sequence of tensors,
// or an optional of either. Unknown parts stay unset.
struct TypeInfo {
  enum class Kind { kUnknown, kTensor, kSequence, kOptional };
  Kind kind = Kind::kUnknown;
  DType dtype = DType::kUndefined;        // for kTensor
  std::optional<Dims> shape;              // for kTensor; nullopt = rank unknown
  std::shared_ptr<TypeInfo> elem;         // for kSequence / kOptional

  static TypeInfo Tensor(DType t, std::optional<Dims> dims = std::nullopt);
  std::string ToString() const;           // "float32[1,3,?,?]", "seq(float32[?])"
};

struct Value {
  std::string name;
  TypeInfo type;
};

class Graph;

struct Attribute {
  // Values equal ONNX AttributeProto.AttributeType.
  enum class Type { kUndefined = 0, kFloat = 1, kInt = 2, kString = 3, kTensor = 4, kGraph = 5,
                    kFloats = 6, kInts = 7, kStrings = 8, kTensors = 9, kGraphs = 10,
                    kSparseTensor = 11, kSparseTensors = 12, kTypeProto = 13, kTypeProtos = 14 };
  std::string name;
  Type type = Type::kUndefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  TypeInfo tp;                            // kTypeProto
  std::vector<TypeInfo> tps;              // kTypeProtos
  std::string ref_attr_name;              // inside functions: refers to a caller attribute

  // Builders (tests, the seed model builder, passes).
  static Attribute Int(std::string n, int64_t v);
  static Attribute Float(std::string n, float v);
  static Attribute String(std::string n, std::string v);
  static Attribute Ints(std::string n, std::vector<int64_t> v);
  static Attribute Floats(std::string n, std::vector<float> v);
  static Attribute Strings(std::string n, std::vector<std::string> v);
  static Attribute TensorValue(std::string n, kiln::Tensor v);
  static Attribute GraphValue(std::string n, std::shared_ptr<Graph> g);
};
const char* AttributeTypeName(Attribute::Type t);

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;                     // "" is the default ONNX domain ("ai.onnx")
  std::vector<std::string> inputs;        // "" = omitted optional input
  std::vector<std::string> outputs;       // "" = omitted optional output
  std::map<std::string, Attribute> attrs;
  std::string doc_string;

  // "node 'conv_3' (Conv)" — the prefix of every error about this node.
  std::string Describe() const;
  bool HasInput(size_t i) const { return i < inputs.size() && !inputs[i].empty(); }
  bool HasOutput(size_t i) const { return i < outputs.size() && !outputs[i].empty(); }
  const Attribute* FindAttr(const std::string& n) const;

  // Typed attribute access. The Result forms fail with a message naming the
  // node when the attribute has another type; the defaulted forms return def
  // when it is absent.
  Result<int64_t> GetInt(const std::string& n, int64_t def) const;
  Result<float> GetFloat(const std::string& n, float def) const;
  Result<std::string> GetString(const std::string& n, const std::string& def) const;
  Result<std::vector<int64_t>> GetInts(const std::string& n, const std::vector<int64_t>& def = {}) const;
  Result<std::vector<float>> GetFloats(const std::string& n, const std::vector<float>& def = {}) const;
  Result<std::vector<std::string>> GetStrings(const std::string& n, const std::vector<std::string>& def = {}) const;
  Result<Tensor> GetTensor(const std::string& n) const;
  // Error helper: Status with "node 'x' (Op): " prefixed.
  Status Error(StatusCode code, const std::string& msg) const;
  Status Invalid(const std::string& msg) const { return Error(StatusCode::kInvalidModel, msg); }
};

class Graph {
 public:
  std::string name;
  std::string doc_string;
  std::vector<Node> nodes;                     // file order; see TopologicalOrder()
  std::vector<Value> inputs;                   // graph inputs (may include initializer names)
  std::vector<Value> outputs;
  std::map<std::string, Tensor> initializers;
  std::map<std::string, Value> value_info;     // intermediate types known from the file
  std::vector<std::string> sparse_initializer_names;

  bool IsInitializer(const std::string& n) const { return initializers.count(n) != 0; }
  // Inputs that are not also initializers: what a user must (or may) feed.
  std::vector<const Value*> RealInputs() const;

  // Node indices in an order where every node comes after its producers.
  // Fails naming the values on a cycle, or a node input that nothing produces
  // (a graph input, initializer, earlier node or `outer_scope` name).
  Result<std::vector<size_t>> TopologicalOrder(const std::vector<std::string>& outer_scope = {}) const;
};

// Names a subgraph reads from enclosing scopes (at any depth of nesting).
std::vector<std::string> OuterReferences(const Graph& g);
// The outer references of all subgraphs attached to a node.
std::vector<std::string> NodeOuterReferences(const Node& n);

struct OperatorSetId {
  std::string domain;
  int64_t version = 0;
};

// A model-local function (FunctionProto): expanded at import into its body.
struct Function {
  std::string name, domain;
  std::vector<std::string> inputs, outputs, attributes;
  std::vector<Node> nodes;
  std::vector<OperatorSetId> opsets;
};

struct Model {
  Graph graph;
  int64_t ir_version = 8;
  std::map<std::string, int64_t> opsets;       // domain -> version; "" is ai.onnx
  std::string producer_name, producer_version, domain, doc_string;
  int64_t model_version = 0;
  std::map<std::string, std::string> metadata;
  std::vector<Function> functions;
  // External data files the model was loaded with, relative to its folder
  // (the plan cache's key covers their contents).
  std::vector<std::string> external_files;

  int64_t OpsetFor(const std::string& op_domain) const;  // 0 when not imported
};

// A readable text form of a graph (subgraphs indented), for `kiln inspect`
// and pass tests.
std::string ToText(const Graph& g, int indent = 0);
std::string ToText(const Model& m);

}  // namespace kiln::ir
