// Matrix-product family: attributes and shape inference of Gemm, MatMul,
// MatMulInteger, QLinearMatMul and Det (Einsum: matmul_einsum.cc).
#include "ops/matmul.h"

#include "ops/families.h"
#include "ops/infer_util.h"
#include "ops/matmul_einsum.h"

namespace kiln::ops {

Result<GemmAttrs> ParseGemm(const ir::Node& node, int64_t opset) {
  GemmAttrs a;
  KILN_ASSIGN_OR_RETURN(int64_t ta, node.GetInt("transA", 0));
  KILN_ASSIGN_OR_RETURN(int64_t tb, node.GetInt("transB", 0));
  KILN_ASSIGN_OR_RETURN(a.alpha, node.GetFloat("alpha", 1.0f));
  KILN_ASSIGN_OR_RETURN(a.beta, node.GetFloat("beta", 1.0f));
  a.trans_a = ta != 0;
  a.trans_b = tb != 0;
  if (opset < 7) {
    KILN_ASSIGN_OR_RETURN(int64_t bc, node.GetInt("broadcast", 0));
    a.broadcast_c = bc != 0;
  }
  return a;
}

namespace {

std::string DimText(const ir::Dim& d) { return d.known() ? std::to_string(d.value) : std::string("?"); }

// Joins two dims that must be equal (unknown matches anything).
Result<ir::Dim> SameDim(const ir::Node& node, const ir::Dim& x, const ir::Dim& y, const std::string& what) {
  if (x.known() && y.known() && x.value != y.value)
    return node.Invalid(what + " do not match: " + DimText(x) + " vs " + DimText(y));
  return x.known() ? x : y;
}

}  // namespace

Result<ir::Dims> MatMulDims(const ir::Node& node, const ir::Dims& a, const ir::Dims& b) {
  if (a.empty() || b.empty()) return node.Invalid("MatMul operands must have rank >= 1");
  ir::Dims ea = a, eb = b;
  if (ea.size() == 1) ea.insert(ea.begin(), ir::Dim::Known(1));
  if (eb.size() == 1) eb.push_back(ir::Dim::Known(1));
  KILN_RETURN_IF_ERROR(SameDim(node, ea[ea.size() - 1], eb[eb.size() - 2], "inner dimensions (K) of the operands").status());
  ir::Dims ba(ea.begin(), ea.end() - 2), bb(eb.begin(), eb.end() - 2);
  auto batch = BroadcastDims(ba, bb);
  if (!batch.ok()) return node.Invalid("batch dims: " + batch.status().message());
  ir::Dims out = *batch;
  if (a.size() > 1) out.push_back(ea[ea.size() - 2]);
  if (b.size() > 1) out.push_back(eb[eb.size() - 1]);
  return out;
}

Result<MatMulPlan> PlanMatMul(const ir::Node& node, const Shape& a, const Shape& b) {
  KILN_ASSIGN_OR_RETURN(ir::Dims od, MatMulDims(node, ir::DimsFromShape(a), ir::DimsFromShape(b)));
  MatMulPlan p;
  p.out = *ToShape(od);
  Shape ea = a, eb = b;
  if (ea.size() == 1) ea.insert(ea.begin(), 1);
  if (eb.size() == 1) eb.push_back(1);
  p.m = ea[ea.size() - 2];
  p.k = ea[ea.size() - 1];
  p.n = eb[eb.size() - 1];
  Shape ba(ea.begin(), ea.end() - 2), bb(eb.begin(), eb.end() - 2);
  const size_t r = std::max(ba.size(), bb.size());
  p.batch.assign(r, 1);
  p.a_batch_strides.assign(r, 0);
  p.b_batch_strides.assign(r, 0);
  // Strides in whole matrices of each operand's batch dims, 0 where broadcast.
  auto fill = [&](const Shape& s, std::vector<int64_t>& st) {
    int64_t acc = 1;
    for (size_t k = s.size(); k-- > 0;) {
      const size_t o = k + r - s.size();
      st[o] = s[k] == 1 ? 0 : acc;
      if (s[k] != 1) p.batch[o] = s[k];
      acc *= s[k];
    }
  };
  fill(ba, p.a_batch_strides);
  fill(bb, p.b_batch_strides);
  return p;
}

namespace {

const std::initializer_list<DType> kGemmTypes = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64,
                                                 DType::kInt32,   DType::kInt64,    DType::kUint32,  DType::kUint64};

Status InferGemm(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(ctx.opset() >= 11 ? 2 : 3, 3));
  KILN_ASSIGN_OR_RETURN(GemmAttrs a, ParseGemm(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kGemmTypes));
  const DType dt = ctx.input_dtype(0);
  for (size_t i = 1; i < 3; ++i)
    if (ctx.has_input(i) && ctx.input_dtype(i) != DType::kUndefined && dt != DType::kUndefined && ctx.input_dtype(i) != dt)
      return ctx.Error("input " + std::to_string(i) + " has dtype " + DTypeName(ctx.input_dtype(i)) + ", expected " +
                       DTypeName(dt));
  const ir::Dims* ad = ctx.input_dims(0);
  const ir::Dims* bd = ctx.input_dims(1);
  if (ad && ad->size() != 2) return ctx.Error("input A must have rank 2, got rank " + std::to_string(ad->size()));
  if (bd && bd->size() != 2) return ctx.Error("input B must have rank 2, got rank " + std::to_string(bd->size()));
  ir::Dim m, ka, kb, n;
  if (ad) { m = (*ad)[a.trans_a ? 1 : 0]; ka = (*ad)[a.trans_a ? 0 : 1]; }
  if (bd) { kb = (*bd)[a.trans_b ? 1 : 0]; n = (*bd)[a.trans_b ? 0 : 1]; }
  KILN_RETURN_IF_ERROR(SameDim(ctx.node(), ka, kb, "inner dimensions (K) of A and B").status());
  ir::Dims out = {m, n};
  if (ctx.has_input(2)) {
    if (const ir::Dims* cd = ctx.input_dims(2)) {
      if (cd->size() > 2) return ctx.Error("input C must have rank <= 2, got rank " + std::to_string(cd->size()));
      // C broadcasts to [M, N] (unidirectionally): each of its dims is 1 or equal.
      for (size_t k = 0; k < cd->size(); ++k) {
        const ir::Dim& c = (*cd)[k];
        ir::Dim& o = out[k + 2 - cd->size()];
        if (!c.known()) continue;
        if (!a.broadcast_c || c.value != 1) {
          KILN_ASSIGN_OR_RETURN(o, SameDim(ctx.node(), o, c, "dims of C and of the product"));
        }
      }
      if (!a.broadcast_c && cd->size() != 2) return ctx.Error("input C must have shape [M, N] when broadcast = 0");
    }
  }
  SetOutputDims(ctx, 0, dt, out);
  return Status::Ok();
}

Status InferMatMul(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kGemmTypes));
  const DType dt = ctx.input_dtype(0);
  if (ctx.input_dtype(1) != DType::kUndefined && dt != DType::kUndefined && ctx.input_dtype(1) != dt)
    return ctx.Error(std::string("operands have different dtypes ") + DTypeName(dt) + " and " + DTypeName(ctx.input_dtype(1)));
  const ir::Dims* ad = ctx.input_dims(0);
  const ir::Dims* bd = ctx.input_dims(1);
  if (!ad || !bd) { SetOutputDims(ctx, 0, dt, std::nullopt); return Status::Ok(); }
  KILN_ASSIGN_OR_RETURN(ir::Dims out, MatMulDims(ctx.node(), *ad, *bd));
  SetOutputDims(ctx, 0, dt, out);
  return Status::Ok();
}

// Zero point / scale of a quantized operand: a scalar (per tensor) or a 1-D
// tensor of `count` values (per row of A, per column of B).
Status CheckQuantParam(const InferContext& ctx, size_t i, const std::string& what) {
  if (!ctx.has_input(i)) return Status::Ok();
  const ir::Dims* d = ctx.input_dims(i);
  if (d && d->size() > 1) {
    size_t non1 = 0;
    for (const auto& x : *d) non1 += !(x.known() && x.value == 1);
    if (non1 > 1) return ctx.Error(what + " must be a scalar or a 1-D tensor, got " + ir::DimsToString(*d));
  }
  return Status::Ok();
}

Status InferMatMulInteger(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 4));
  for (size_t i = 0; i < 4; ++i) KILN_RETURN_IF_ERROR(CheckDType(ctx, i, {DType::kInt8, DType::kUint8}));
  if (ctx.has_input(2) && ctx.input_dtype(2) != DType::kUndefined && ctx.input_dtype(2) != ctx.input_dtype(0))
    return ctx.Error("a_zero_point must have the dtype of A");
  if (ctx.has_input(3) && ctx.input_dtype(3) != DType::kUndefined && ctx.input_dtype(3) != ctx.input_dtype(1))
    return ctx.Error("b_zero_point must have the dtype of B");
  KILN_RETURN_IF_ERROR(CheckQuantParam(ctx, 2, "a_zero_point"));
  KILN_RETURN_IF_ERROR(CheckQuantParam(ctx, 3, "b_zero_point"));
  const ir::Dims* ad = ctx.input_dims(0);
  const ir::Dims* bd = ctx.input_dims(1);
  if (!ad || !bd) { SetOutputDims(ctx, 0, DType::kInt32, std::nullopt); return Status::Ok(); }
  KILN_ASSIGN_OR_RETURN(ir::Dims out, MatMulDims(ctx.node(), *ad, *bd));
  SetOutputDims(ctx, 0, DType::kInt32, out);
  return Status::Ok();
}

// QLinearMatMul inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point,
// y_scale, y_zero_point.
Status InferQLinearMatMul(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(8, 8));
  for (size_t i : {0, 2, 3, 5, 7}) KILN_RETURN_IF_ERROR(CheckDType(ctx, i, {DType::kInt8, DType::kUint8}));
  for (size_t i : {1, 4, 6}) KILN_RETURN_IF_ERROR(CheckDType(ctx, i, {DType::kFloat32}));
  const char* names[] = {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"};
  for (size_t i : {1, 2, 4, 5, 6, 7}) KILN_RETURN_IF_ERROR(CheckQuantParam(ctx, i, names[i]));
  const ir::Dims* ad = ctx.input_dims(0);
  const ir::Dims* bd = ctx.input_dims(3);
  const DType dt = ctx.input_dtype(7);
  if (!ad || !bd) { SetOutputDims(ctx, 0, dt, std::nullopt); return Status::Ok(); }
  KILN_ASSIGN_OR_RETURN(ir::Dims out, MatMulDims(ctx.node(), *ad, *bd));
  SetOutputDims(ctx, 0, dt, out);
  return Status::Ok();
}

Status InferDet(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}));
  const DType dt = ctx.input_dtype(0);
  const ir::Dims* d = ctx.input_dims(0);
  if (!d) { SetOutputDims(ctx, 0, dt, std::nullopt); return Status::Ok(); }
  if (d->size() < 2) return ctx.Error("input must have rank >= 2, got rank " + std::to_string(d->size()));
  KILN_RETURN_IF_ERROR(SameDim(ctx.node(), (*d)[d->size() - 2], (*d)[d->size() - 1], "the two last dims (a square matrix)").status());
  SetOutputDims(ctx, 0, dt, ir::Dims(d->begin(), d->end() - 2));
  return Status::Ok();
}

}  // namespace

void RegisterMatMulOps(OpRegistry& r) {
  r.Register({"", "Gemm", 1, 1000, InferGemm});
  r.Register({"", "MatMul", 1, 1000, InferMatMul});
  r.Register({"", "MatMulInteger", 10, 1000, InferMatMulInteger});
  r.Register({"", "QLinearMatMul", 10, 1000, InferQLinearMatMul});
  r.Register({"", "Det", 11, 1000, InferDet});
  r.Register({"", "Einsum", 12, 1000, InferEinsum});
}

}  // namespace kiln::ops
