// Reference kernel of Gradient (ai.onnx.preview.training, opset 1): reverse
// mode automatic differentiation of the enclosing graph.
//
// The kernel finds the nodes that compute `y` from the values named in `xs`
// and `zs` (plus initializers and Constants), evaluates them forward on the
// node's inputs in double, then propagates dy (seeded with ones of y's shape,
// i.e. the gradient of sum(y)) back through each node by its derivative rule.
// Broadcast operands get the incoming gradient summed over the broadcast
// dims. A value of xs that y does not depend on gets a zero gradient.
// Supported ops: Add, Sub, Mul, Div, Neg, Identity (and Constant leaves).
#include <functional>
#include <map>
#include <set>

#include "ops/infer_util.h"
#include "ops/training.h"
#include "providers/reference/training_gradient.h"
#include "providers/reference/util.h"

namespace kiln::reference {
namespace {

// A dense double tensor for the forward and backward passes.
struct DT {
  Shape shape;
  std::vector<double> v;
  static DT Filled(const Shape& s, double x) { return {s, std::vector<double>(static_cast<size_t>(DimProduct(s, 0, s.size())), x)}; }
  static DT Of(const Tensor& t) {
    DT d{t.shape(), std::vector<double>(static_cast<size_t>(t.numel()))};
    for (int64_t i = 0; i < t.numel(); ++i) d.v[static_cast<size_t>(i)] = t.GetAsDouble(i);
    return d;
  }
};

Result<DT> Binary(const ir::Node& n, const DT& a, const DT& b, const std::function<double(double, double)>& f) {
  auto dims = ops::BroadcastDims(ir::DimsFromShape(a.shape), ir::DimsFromShape(b.shape));
  if (!dims.ok()) return n.Invalid(dims.status().message());
  const Shape out = *ops::ToShape(*dims);
  const auto sa = BroadcastStrides(a.shape, out), sb = BroadcastStrides(b.shape, out);
  DT r = DT::Filled(out, 0);
  ForEachIndex(out, [&](int64_t lin, const std::vector<int64_t>& idx) {
    r.v[static_cast<size_t>(lin)] = f(a.v[static_cast<size_t>(OffsetOf(idx, sa))], b.v[static_cast<size_t>(OffsetOf(idx, sb))]);
  });
  return r;
}

// Sums a gradient of the broadcast shape down to an operand's shape.
DT SumTo(const DT& g, const Shape& s) {
  DT r = DT::Filled(s, 0);
  const auto st = BroadcastStrides(s, g.shape);
  ForEachIndex(g.shape, [&](int64_t lin, const std::vector<int64_t>& idx) {
    r.v[static_cast<size_t>(OffsetOf(idx, st))] += g.v[static_cast<size_t>(lin)];
  });
  return r;
}

bool Supported(const ir::Node& n) {
  static const std::set<std::string> kOps = {"Add", "Sub", "Mul", "Div", "Neg", "Identity", "Constant"};
  return n.domain.empty() && kOps.count(n.op_type) && !n.FindAttr("axis");  // "axis": pre-opset-7 broadcasting
}

class Differentiator {
 public:
  Differentiator(const ir::Node& grad_node, const ir::Graph& g) : node_(grad_node), g_(g) {
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (const auto& o : g.nodes[i].outputs)
        if (!o.empty()) producer_[o] = i;
  }
  void SetLeaf(const std::string& name, DT v) { values_[name] = std::move(v); }

  // Orders the nodes computing `name` (post-order), checking support.
  Status Collect(const std::string& name, std::set<std::string>& visiting) {
    if (values_.count(name) || done_.count(name)) return Status::Ok();
    auto it = producer_.find(name);
    if (it == producer_.end()) {
      auto init = g_.initializers.find(name);
      if (init != g_.initializers.end()) { values_[name] = DT::Of(init->second); return Status::Ok(); }
      return node_.Invalid("value '" + name + "' on the path to y is not produced by a node and is not in xs or zs");
    }
    const ir::Node& n = g_.nodes[it->second];
    if (&n == &node_ || visiting.count(name)) return node_.Invalid("y depends on itself or on the Gradient node");
    if (!Supported(n))
      return node_.Error(StatusCode::kUnimplemented, "cannot differentiate through " + n.Describe());
    visiting.insert(name);
    for (const auto& in : n.inputs) {
      if (in.empty()) continue;
      KILN_RETURN_IF_ERROR(Collect(in, visiting));
    }
    visiting.erase(name);
    done_.insert(name);
    order_.push_back(&n);
    return Status::Ok();
  }

  Status Forward() {
    for (const ir::Node* n : order_) {
      const std::string& out = n->outputs[0];
      if (n->op_type == "Constant") {
        KILN_ASSIGN_OR_RETURN(Tensor t, n->GetTensor("value"));
        values_[out] = DT::Of(t);
        continue;
      }
      const DT& a = values_.at(n->inputs.at(0));
      if (n->op_type == "Neg") { DT r = a; for (double& x : r.v) x = -x; values_[out] = r; continue; }
      if (n->op_type == "Identity") { values_[out] = a; continue; }
      if (n->inputs.size() != 2) return n->Invalid("expected 2 inputs");
      const DT& b = values_.at(n->inputs[1]);
      std::function<double(double, double)> f;
      if (n->op_type == "Add") f = [](double x, double y) { return x + y; };
      else if (n->op_type == "Sub") f = [](double x, double y) { return x - y; };
      else if (n->op_type == "Mul") f = [](double x, double y) { return x * y; };
      else f = [](double x, double y) { return x / y; };
      KILN_ASSIGN_OR_RETURN(values_[out], Binary(*n, a, b, f));
    }
    return Status::Ok();
  }

  // Backward pass from y; returns the gradient of each name (absent: zero).
  Status Backward(const std::string& y) {
    grads_[y] = DT::Filled(values_.at(y).shape, 1.0);
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const ir::Node& n = **it;
      auto git = grads_.find(n.outputs[0]);
      if (git == grads_.end() || n.op_type == "Constant") continue;
      const DT gy = git->second;
      const DT& a = values_.at(n.inputs[0]);
      auto map = [](DT d, double s) { for (double& x : d.v) x *= s; return d; };
      if (n.op_type == "Identity") { Accumulate(n.inputs[0], gy); continue; }
      if (n.op_type == "Neg") { Accumulate(n.inputs[0], map(gy, -1.0)); continue; }
      const DT& b = values_.at(n.inputs[1]);
      const auto mul = [](double x, double y) { return x * y; };
      DT ga, gb;
      if (n.op_type == "Add" || n.op_type == "Sub") {
        ga = gy;
        gb = n.op_type == "Add" ? gy : map(gy, -1.0);
      } else if (n.op_type == "Mul") {
        KILN_ASSIGN_OR_RETURN(ga, Binary(n, gy, b, mul));  // d(ab)/da = b
        KILN_ASSIGN_OR_RETURN(gb, Binary(n, gy, a, mul));  // d(ab)/db = a
      } else {  // Div: d(a/b)/da = 1/b, d(a/b)/db = -a/b^2
        KILN_ASSIGN_OR_RETURN(ga, Binary(n, gy, b, [](double g, double y) { return g / y; }));
        KILN_ASSIGN_OR_RETURN(DT ab, Binary(n, a, b, [](double x, double y) { return -x / (y * y); }));
        KILN_ASSIGN_OR_RETURN(gb, Binary(n, gy, ab, mul));
      }
      Accumulate(n.inputs[0], SumTo(ga, a.shape));
      Accumulate(n.inputs[1], SumTo(gb, b.shape));
    }
    return Status::Ok();
  }
  const DT* Grad(const std::string& name) const {
    auto it = grads_.find(name);
    return it == grads_.end() ? nullptr : &it->second;
  }

 private:
  void Accumulate(const std::string& name, DT g) {
    auto it = grads_.find(name);
    if (it == grads_.end()) { grads_[name] = std::move(g); return; }
    for (size_t i = 0; i < g.v.size(); ++i) it->second.v[i] += g.v[i];
  }

  const ir::Node& node_;
  const ir::Graph& g_;
  std::map<std::string, size_t> producer_;
  std::map<std::string, DT> values_, grads_;
  std::set<std::string> done_;
  std::vector<const ir::Node*> order_;
};

Status Gradient(runtime::KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::GradientAttrs a, ops::ParseGradient(node));
  const ir::Graph* g = ctx.graph();
  if (!g) return ctx.Unsupported("the enclosing graph is not available to differentiate");
  Differentiator d(node, *g);
  for (size_t i = 0; i < a.xs.size(); ++i) d.SetLeaf(a.xs[i], DT::Of(ctx.input(i)));
  for (size_t j = 0; j < a.zs.size(); ++j) d.SetLeaf(a.zs[j], DT::Of(ctx.input(a.xs.size() + j)));
  std::set<std::string> visiting;
  KILN_RETURN_IF_ERROR(d.Collect(a.y, visiting));
  KILN_RETURN_IF_ERROR(d.Forward());
  KILN_RETURN_IF_ERROR(d.Backward(a.y));
  for (size_t i = 0; i < a.xs.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(i));
    const DT* gx = d.Grad(a.xs[i]);
    for (int64_t e = 0; e < out.numel(); ++e) out.SetFromDouble(e, gx ? gx->v[static_cast<size_t>(e)] : 0.0);
  }
  return Status::Ok();
}

}  // namespace

void RegisterGradientKernel(runtime::KernelRegistry& r) { r.Register(ops::kTrainingDomain, "Gradient", Gradient); }

}  // namespace kiln::reference
