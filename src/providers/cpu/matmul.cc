// MatMul, Gemm, and kiln's FusedGemm / FusedMatMul (float32) on oneDNN's
// matmul primitive. The factory runs once per node at session creation and
// declines what it cannot run exactly (other dtypes, an activation oneDNN
// cannot express, a statically empty inner dimension), so those nodes fall
// back to the reference kernel. Primitives are cached per input shapes; a
// constant B (an initializer) is reordered once per shape into the blocked
// layout the primitive picks ("packed"), and static shapes build everything
// at session creation.
//
// MatMul: numpy semantics (ops::PlanMatMul): 1-D operands get a 1 added and
// removed; batch dims broadcast, which oneDNN's matmul does itself (operands
// padded with leading 1s to one rank). When B has no batch (the Linear
// layers: [.., M, K] x [K, N]) A's batch folds into M: one 2-D product.
//
// Gemm: Y = alpha * A' B' + beta * C. transA / transB are strides of the
// plain operands (oneDNN reads "ba" layouts); alpha is an output scale; C
// broadcasts to [M, N] (opset 7+; before, it must be [M, N] already):
//   - constant C: beta * C computed once, added as the primitive's bias
//     (any broadcast dims) when alpha is 1, else as a binary-add post-op
//     (after the output scale);
//   - C at run time: the bias argument (alpha = beta = 1), a binary-add
//     post-op (beta = 1), or for other betas copied into Y and added by a
//     sum post-op with scale beta.
// FusedGemm / FusedMatMul (ops/fused.h): the activation is an eltwise
// post-op (AppendActivation) after the addend; FusedMatMul's Bias, which
// broadcasts to Y, is the bias argument.
//
// Layout: row-major in and out (the default KernelLayouts).
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "ops/fused.h"
#include "ops/matmul.h"
#include "providers/cpu/dnnl_common.h"
#include "providers/cpu/families.h"

namespace kiln::cpu {
namespace {

using dt = dnnl::memory::data_type;
using mdims = dnnl::memory::dims;

enum class AddendMode { kNone, kBias, kBinary, kSum };

struct MatMulSpec {
  bool gemm = false;
  ops::GemmAttrs g;          // Gemm / FusedGemm
  ops::ActivationAttrs act;  // fused ops
  bool has_addend = false;   // Gemm's C, FusedMatMul's Bias (input 2)
  Tensor const_b;            // B when it is an initializer
  Tensor const_addend;       // the addend when it is an initializer
};

struct MatMulPrimitive {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  dnnl::memory::desc src_md, wei_md, dst_md, addend_md;
  PackedWeights weights;      // packed constant B (empty: B read at run time)
  dnnl::memory addend_const;  // beta * C, or the constant Bias (empty: read at run time)
  AddendMode mode = AddendMode::kNone;
  int binary_index = 0;       // position of the binary post-op
  Shape out_shape;
  int64_t m = 0, k = 0, n = 0;
  bool empty = false;         // a zero-sized dim: no primitive
  std::vector<int64_t> sum_strides;  // kSum: C's strides broadcast to [M, N]
};

mdims RowMajorStrides(const mdims& d) {
  mdims s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * std::max<int64_t>(d[i], 1);
  return s;
}
dnnl::memory::desc Plain(const mdims& d) { return dnnl::memory::desc(d, dt::f32, RowMajorStrides(d)); }

// `s` padded with leading 1s to `rank` dims.
mdims PadTo(const Shape& s, size_t rank) {
  mdims d(rank - std::min(rank, s.size()), 1);
  d.insert(d.end(), s.begin(), s.end());
  return d;
}

int64_t Product(const mdims& d, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= d[i];
  return p;
}

class MatMulKernel {
 public:
  MatMulKernel(const ir::Node& node, MatMulSpec spec) : node_(node), spec_(std::move(spec)) {}

  // shapes: A, B, and the addend's ({} with has_addend false when absent).
  Result<std::shared_ptr<const MatMulPrimitive>> Get(const std::vector<Shape>& shapes) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(shapes);
    if (it != cache_.end()) return it->second;
    KILN_ASSIGN_OR_RETURN(auto p, Build(shapes));
    cache_[shapes] = p;
    return p;
  }

  Status Run(runtime::KernelContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const bool addend = spec_.has_addend && ctx.has_input(2);
    const Tensor* c = addend ? &ctx.input(2) : nullptr;
    if (a.dtype() != DType::kFloat32 || b.dtype() != DType::kFloat32 || (c && c->dtype() != DType::kFloat32))
      return ctx.Error("cpu " + node_.op_type + " takes float32 operands");
    std::vector<Shape> key = {a.shape(), b.shape()};
    if (c) key.push_back(c->shape());
    KILN_ASSIGN_OR_RETURN(auto p, Get(key));
    KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kFloat32, p->out_shape));
    if (y.numel() == 0) return Status::Ok();
    if (p->empty) return ctx.Unsupported("cpu " + node_.op_type + " with an empty inner dimension");
    float* yp = y.data<float>();
    if (p->mode == AddendMode::kSum) {
      // Y = C broadcast to [M, N]; the sum post-op adds beta * Y.
      const float* cp = c->data<float>();
      for (int64_t i = 0; i < p->m; ++i)
        for (int64_t j = 0; j < p->n; ++j) yp[i * p->n + j] = cp[i * p->sum_strides[0] + j * p->sum_strides[1]];
    }
    return Guard(node_, [&] {
      std::unordered_map<int, dnnl::memory> args;
      args.emplace(DNNL_ARG_SRC, dnnl::memory(p->src_md, Engine(), const_cast<void*>(a.raw())));
      args.emplace(DNNL_ARG_WEIGHTS, p->weights ? p->weights.memory : dnnl::memory(p->wei_md, Engine(), const_cast<void*>(b.raw())));
      args.emplace(DNNL_ARG_DST, dnnl::memory(p->dst_md, Engine(), yp));
      if (p->mode == AddendMode::kBias || p->mode == AddendMode::kBinary) {
        dnnl::memory add = p->addend_const ? p->addend_const : dnnl::memory(p->addend_md, Engine(), const_cast<void*>(c->raw()));
        args.emplace(p->mode == AddendMode::kBias ? DNNL_ARG_BIAS : (DNNL_ARG_ATTR_MULTIPLE_POST_OP(p->binary_index) | DNNL_ARG_SRC_1), add);
      }
      Execute(p->prim, p->pd, std::move(args));
    });
  }

 private:
  Result<std::shared_ptr<const MatMulPrimitive>> Build(const std::vector<Shape>& shapes) {
    auto p = std::make_shared<MatMulPrimitive>();
    const Shape& as = shapes[0];
    const Shape& bs = shapes[1];
    const bool has_addend = shapes.size() > 2;
    mdims src, wei, dst, src_strides, wei_strides;
    mdims addend;  // the addend's dims aligned to dst (1 = broadcast)
    if (spec_.gemm) {
      if (as.size() != 2 || bs.size() != 2) return node_.Invalid("Gemm operands must be 2-D, got " + ShapeToString(as) + " and " + ShapeToString(bs));
      const int64_t m = spec_.g.trans_a ? as[1] : as[0], k = spec_.g.trans_a ? as[0] : as[1];
      const int64_t kb = spec_.g.trans_b ? bs[1] : bs[0], n = spec_.g.trans_b ? bs[0] : bs[1];
      if (k != kb) return node_.Invalid("inner dimensions of A " + ShapeToString(as) + " and B " + ShapeToString(bs) + " differ");
      p->m = m, p->k = k, p->n = n;
      p->out_shape = {m, n};
      src = {m, k};
      wei = {k, n};
      dst = {m, n};
      src_strides = spec_.g.trans_a ? mdims{1, m} : mdims{k, 1};
      wei_strides = spec_.g.trans_b ? mdims{1, k} : mdims{n, 1};
      if (has_addend) {
        const Shape& cs = shapes[2];
        if (cs.size() > 2) return node_.Invalid("C " + ShapeToString(cs) + " must have rank <= 2");
        addend = PadTo(cs, 2);
        if ((addend[0] != 1 && addend[0] != m) || (addend[1] != 1 && addend[1] != n) || (!spec_.g.broadcast_c && addend != dst))
          return node_.Invalid("C " + ShapeToString(cs) + " does not broadcast to [" + std::to_string(m) + "," + std::to_string(n) + "]");
      }
    } else {
      KILN_ASSIGN_OR_RETURN(ops::MatMulPlan plan, ops::PlanMatMul(node_, as, bs));
      p->m = plan.m, p->k = plan.k, p->n = plan.n;
      p->out_shape = plan.out;
      Shape ea = as, eb = bs;
      if (ea.size() == 1) ea.insert(ea.begin(), 1);
      if (eb.size() == 1) eb.push_back(1);
      const size_t r = std::max(ea.size(), eb.size());
      src = PadTo(ea, r);
      wei = PadTo(eb, r);
      dst = mdims(plan.batch.begin(), plan.batch.end());
      dst.push_back(plan.m);
      dst.push_back(plan.n);
      if (has_addend) {
        // The Bias broadcasts to Y (ops/fused.h); Y's dims are dst's less
        // the 1 of a 1-D operand, which goes back in here.
        const Shape& cs = shapes[2];
        if (cs.size() > plan.out.size()) return node_.Invalid("Bias " + ShapeToString(cs) + " does not broadcast to " + ShapeToString(plan.out));
        mdims yb = PadTo(cs, plan.out.size());
        for (size_t i = 0; i < yb.size(); ++i)
          if (yb[i] != 1 && yb[i] != plan.out[i]) return node_.Invalid("Bias " + ShapeToString(cs) + " does not broadcast to " + ShapeToString(plan.out));
        if (as.size() == 1) yb.insert(yb.end() - (bs.size() == 1 ? 0 : 1), 1);
        if (bs.size() == 1) yb.push_back(1);
        addend = PadTo(Shape(yb.begin(), yb.end()), r);
      }
      // B without batch: A's batch folds into M (one 2-D product), when the
      // addend varies along N at most.
      const bool b_flat = Product(wei, 0, r - 2) == 1;
      const bool addend_flat = !has_addend || Product(addend, 0, r - 1) == 1;
      if (r > 2 && b_flat && addend_flat) {
        const int64_t rows = Product(src, 0, r - 1);
        src = {rows, plan.k};
        wei = {plan.k, plan.n};
        dst = {rows, plan.n};
        if (has_addend) addend = {1, addend[r - 1]};
      }
      src_strides = RowMajorStrides(src);
      wei_strides = RowMajorStrides(wei);
    }
    if (src.size() > 12) return Unimplemented(node_.Describe() + ": more than 12 dims");
    for (size_t i = 0; i < shapes.size(); ++i) KILN_RETURN_IF_ERROR(CheckInt32Extent(node_, "input", shapes[i]));
    KILN_RETURN_IF_ERROR(CheckInt32Extent(node_, "output", p->out_shape));
    if (p->m == 0 || p->n == 0 || p->k == 0 || Product(dst, 0, dst.size()) == 0) {
      p->empty = true;
      return std::shared_ptr<const MatMulPrimitive>(p);
    }
    const float alpha = spec_.gemm ? spec_.g.alpha : 1.f;
    const float beta = spec_.gemm ? spec_.g.beta : 1.f;
    const bool const_addend = has_addend && spec_.const_addend.defined();
    if (has_addend) {
      if (!const_addend && beta != 1.f) p->mode = AddendMode::kSum;
      else if (alpha == 1.f) p->mode = AddendMode::kBias;
      else p->mode = AddendMode::kBinary;
    }
    if (p->mode == AddendMode::kSum) {  // Gemm only: C's dims padded to [M, N]
      const mdims cst = RowMajorStrides(addend);
      p->sum_strides = {addend[0] == 1 ? 0 : cst[0], addend[1] == 1 ? 0 : cst[1]};
    }
    Status s = Guard(node_, [&] {
      p->src_md = dnnl::memory::desc(src, dt::f32, src_strides);
      p->wei_md = dnnl::memory::desc(wei, dt::f32, wei_strides);
      p->dst_md = Plain(dst);
      if (has_addend) p->addend_md = Plain(addend);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      if (alpha != 1.f) attr.set_output_scales(0, {alpha});
      dnnl::post_ops po;
      if (p->mode == AddendMode::kSum) po.append_sum(beta);
      if (p->mode == AddendMode::kBinary) {
        p->binary_index = po.len();
        po.append_binary(dnnl::algorithm::binary_add, p->addend_md);
      }
      AppendActivation(spec_.act, po);
      attr.set_post_ops(po);
      const bool packed = spec_.const_b.defined();
      dnnl::memory::desc wei_any = packed ? dnnl::memory::desc(wei, dt::f32, dnnl::memory::format_tag::any) : p->wei_md;
      auto desc = p->mode == AddendMode::kBias ? dnnl::matmul::desc(p->src_md, wei_any, p->addend_md, p->dst_md)
                                               : dnnl::matmul::desc(p->src_md, wei_any, p->dst_md);
      p->pd = dnnl::matmul::primitive_desc(desc, attr, Engine());
      p->prim = dnnl::matmul(p->pd);
      if (packed) {
        p->weights = PackWeights(p->wei_md, p->pd.weights_desc(), spec_.const_b.raw());
      }
      if (const_addend) {
        // beta * C (Gemm) or the Bias as is, in a buffer of the primitive's own.
        p->addend_const = dnnl::memory(p->addend_md, Engine());
        const Tensor c = spec_.const_addend.Contiguous();
        const float* cp = c.data<float>();
        float* out = static_cast<float*>(p->addend_const.get_data_handle());
        for (int64_t i = 0; i < c.numel(); ++i) out[i] = beta == 1.f ? cp[i] : beta * cp[i];
      }
    });
    KILN_RETURN_IF_ERROR(s);
    return std::shared_ptr<const MatMulPrimitive>(p);
  }

  const ir::Node& node_;
  MatMulSpec spec_;
  std::mutex mu_;
  std::map<std::vector<Shape>, std::shared_ptr<const MatMulPrimitive>> cache_;
};

bool IsFloat(const ir::TypeInfo* t) { return t && t->kind == ir::TypeInfo::Kind::kTensor && t->dtype == DType::kFloat32; }

std::optional<Shape> StaticShape(const ir::TypeInfo* t) {
  if (!t || !t->shape) return std::nullopt;
  Shape s;
  for (const ir::Dim& d : *t->shape) {
    if (!d.known()) return std::nullopt;
    s.push_back(d.value);
  }
  return s;
}

Result<runtime::Kernel> MakeMatMul(const runtime::KernelInit& init, bool gemm, bool fused) {
  const ir::Node& n = init.node;
  if (!IsFloat(init.input_type(0)) || !IsFloat(init.input_type(1))) return runtime::Kernel();
  MatMulSpec spec;
  spec.gemm = gemm;
  if (gemm) { KILN_ASSIGN_OR_RETURN(spec.g, ops::ParseGemm(n, fused ? 13 : init.opset)); }
  if (fused) {
    KILN_ASSIGN_OR_RETURN(spec.act, ops::ParseActivation(n));
    dnnl::post_ops probe;
    if (!AppendActivation(spec.act, probe)) return runtime::Kernel();
  }
  // Gemm's C and FusedMatMul's Bias are input 2; a plain MatMul has none.
  spec.has_addend = (gemm || fused) && n.HasInput(2);
  if (spec.has_addend && !IsFloat(init.input_type(2))) return runtime::Kernel();
  if (const Tensor* b = init.constant(1)) spec.const_b = b->Contiguous();
  if (spec.has_addend && init.constant(2)) spec.const_addend = init.constant(2)->Contiguous();
  auto kernel = std::make_shared<MatMulKernel>(n, spec);
  auto sa = StaticShape(init.input_type(0)), sb = StaticShape(init.input_type(1));
  std::optional<Shape> sc = spec.has_addend ? StaticShape(init.input_type(2)) : std::optional<Shape>(Shape{});
  if (sa && sb && sc) {
    std::vector<Shape> key = {*sa, *sb};
    if (spec.has_addend) key.push_back(*sc);
    auto p = kernel->Get(key);
    if (!p.ok() && p.status().code() == StatusCode::kUnimplemented) return runtime::Kernel();
    KILN_RETURN_IF_ERROR(p.status());
    if ((*p)->empty) return runtime::Kernel();  // an empty product: the reference writes its zeros / C
  }
  return runtime::Kernel([kernel](runtime::KernelContext& ctx) { return kernel->Run(ctx); });
}

}  // namespace

void RegisterMatMulKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory("", "MatMul", [](const runtime::KernelInit& i) { return MakeMatMul(i, false, false); });
  r.RegisterFactory("", "Gemm", [](const runtime::KernelInit& i) { return MakeMatMul(i, true, false); });
  r.RegisterFactory(ops::kKilnDomain, "FusedGemm", [](const runtime::KernelInit& i) { return MakeMatMul(i, true, true); });
  r.RegisterFactory(ops::kKilnDomain, "FusedMatMul", [](const runtime::KernelInit& i) { return MakeMatMul(i, false, true); });
}

}  // namespace kiln::cpu
