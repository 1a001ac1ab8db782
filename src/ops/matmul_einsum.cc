// Einsum (opset 12): equation parsing and shape inference.
//
// An equation is "term,term,...[->output]". A term is letters with at most
// one "..." standing for the dims not named by letters. Without "->" the
// output is implicit: the ellipsis dims, then the letters that appear exactly
// once in the whole equation, in alphabetical (ASCII) order. Letters repeated
// within one term take a diagonal; letters absent from the output are summed.
#include <cctype>
#include <climits>

#include "ops/infer_util.h"
#include "ops/matmul.h"
#include "ops/matmul_einsum.h"

namespace kiln::ops {
namespace {

struct Term {
  std::vector<int> letters;
  int ellipsis_pos = -1;  // index among letters where "..." stands, -1 when absent
};

Result<Term> ParseTerm(const ir::Node& node, const std::string& t) {
  Term term;
  for (size_t i = 0; i < t.size();) {
    const char c = t[i];
    if (c == '.') {
      if (t.compare(i, 3, "...") != 0) return node.Invalid("einsum term '" + t + "' has a '.' outside an ellipsis");
      if (term.ellipsis_pos >= 0) return node.Invalid("einsum term '" + t + "' has more than one ellipsis");
      term.ellipsis_pos = static_cast<int>(term.letters.size());
      i += 3;
      continue;
    }
    if (c >= 'A' && c <= 'Z') term.letters.push_back(c - 'A');
    else if (c >= 'a' && c <= 'z') term.letters.push_back(26 + (c - 'a'));
    else return node.Invalid(std::string("einsum term '") + t + "' has an invalid character '" + c + "'");
    ++i;
  }
  return term;
}

std::vector<int> ExpandTerm(const Term& t, int ell_rank, int max_ell) {
  std::vector<int> labels;
  const int pos = t.ellipsis_pos < 0 ? static_cast<int>(t.letters.size()) : t.ellipsis_pos;
  for (int i = 0; i < pos; ++i) labels.push_back(t.letters[static_cast<size_t>(i)]);
  for (int j = 0; j < ell_rank; ++j) labels.push_back(EinsumSpec::kEllipsisLabel + (max_ell - ell_rank) + j);
  for (size_t i = static_cast<size_t>(pos); i < t.letters.size(); ++i) labels.push_back(t.letters[i]);
  return labels;
}

// Sizes of each label as dims; size-1 dims broadcast against others.
Result<std::vector<ir::Dim>> LabelDims(const ir::Node& node, const EinsumSpec& spec, const std::vector<ir::Dims>& dims) {
  std::vector<ir::Dim> sizes(static_cast<size_t>(spec.num_labels));
  std::vector<bool> seen(static_cast<size_t>(spec.num_labels), false);
  for (size_t i = 0; i < spec.inputs.size(); ++i)
    for (size_t k = 0; k < spec.inputs[i].size(); ++k) {
      const size_t l = static_cast<size_t>(spec.inputs[i][k]);
      const ir::Dim& d = dims[i][k];
      if (!seen[l]) { sizes[l] = d; seen[l] = true; continue; }
      ir::Dim& s = sizes[l];
      if (s.known() && d.known()) {
        if (s.value == d.value || d.value == 1) continue;
        if (s.value == 1) { s = d; continue; }
        return node.Invalid("einsum operand " + std::to_string(i) + " dim " + std::to_string(k) + " has size " +
                            std::to_string(d.value) + ", another operand has " + std::to_string(s.value) +
                            " for the same label");
      }
      if (!s.known() && d.known() && d.value != 1) s = d;
      else if (s.known() && s.value == 1 && !d.known()) s = d;
    }
  return sizes;
}

}  // namespace

Result<EinsumSpec> ParseEinsum(const ir::Node& node, const std::string& equation, const std::vector<int64_t>& ranks) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = arrow == std::string::npos ? eq : eq.substr(0, arrow);
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= lhs.size(); ++i)
    if (i == lhs.size() || lhs[i] == ',') { parts.push_back(lhs.substr(start, i - start)); start = i + 1; }
  if (parts.size() != ranks.size())
    return node.Invalid("einsum equation '" + equation + "' has " + std::to_string(parts.size()) + " operand terms, got " +
                        std::to_string(ranks.size()) + " inputs");
  std::vector<Term> terms;
  std::vector<int> ell_ranks;
  int max_ell = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Term t, ParseTerm(node, parts[i]));
    const int64_t ell = ranks[i] - static_cast<int64_t>(t.letters.size());
    if (ell < 0 || (t.ellipsis_pos < 0 && ell != 0))
      return node.Invalid("einsum term '" + parts[i] + "' does not match input " + std::to_string(i) + " of rank " +
                          std::to_string(ranks[i]));
    ell_ranks.push_back(static_cast<int>(ell));
    max_ell = std::max(max_ell, static_cast<int>(ell));
    terms.push_back(std::move(t));
  }
  EinsumSpec spec;
  spec.num_labels = EinsumSpec::kEllipsisLabel + max_ell;
  std::vector<int> count(static_cast<size_t>(spec.num_labels), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    spec.inputs.push_back(ExpandTerm(terms[i], ell_ranks[i], max_ell));
    for (int l : terms[i].letters) ++count[static_cast<size_t>(l)];
  }
  if (arrow != std::string::npos) {
    KILN_ASSIGN_OR_RETURN(Term out, ParseTerm(node, eq.substr(arrow + 2)));
    std::vector<bool> used(EinsumSpec::kEllipsisLabel, false);
    for (int l : out.letters) {
      if (count[static_cast<size_t>(l)] == 0)
        return node.Invalid("einsum output label of '" + equation + "' does not appear in any input");
      if (used[static_cast<size_t>(l)]) return node.Invalid("einsum output of '" + equation + "' repeats a label");
      used[static_cast<size_t>(l)] = true;
    }
    // An explicit output without "..." sums the ellipsis dims away.
    spec.output = ExpandTerm(out, out.ellipsis_pos < 0 ? 0 : max_ell, max_ell);
  } else {
    for (int j = 0; j < max_ell; ++j) spec.output.push_back(EinsumSpec::kEllipsisLabel + j);
    for (int l = 0; l < EinsumSpec::kEllipsisLabel; ++l)
      if (count[static_cast<size_t>(l)] == 1) spec.output.push_back(l);
  }
  return spec;
}

Result<std::vector<int64_t>> EinsumLabelSizes(const ir::Node& node, const EinsumSpec& spec,
                                              const std::vector<Shape>& shapes) {
  std::vector<ir::Dims> dims;
  for (const auto& s : shapes) dims.push_back(ir::DimsFromShape(s));
  KILN_ASSIGN_OR_RETURN(std::vector<ir::Dim> d, LabelDims(node, spec, dims));
  std::vector<int64_t> sizes;
  for (const auto& x : d) sizes.push_back(x.value);  // -1 for labels no operand uses
  return sizes;
}

Status InferEinsum(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, INT_MAX));
  const ir::Attribute* eq_attr = ctx.node().FindAttr("equation");
  if (!eq_attr) return ctx.Error("attribute 'equation' is required");
  KILN_ASSIGN_OR_RETURN(std::string eq, ctx.node().GetString("equation", ""));
  const DType dt = ctx.input_dtype(0);
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64,
                                           DType::kInt32, DType::kInt64, DType::kUint32, DType::kUint64}));
  std::vector<ir::Dims> dims;
  std::vector<int64_t> ranks;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
    if (ctx.input_dtype(i) != DType::kUndefined && dt != DType::kUndefined && ctx.input_dtype(i) != dt)
      return ctx.Error("all inputs must have the same dtype");
    const ir::Dims* d = ctx.input_dims(i);
    if (!d) { SetOutputDims(ctx, 0, dt, std::nullopt); return Status::Ok(); }
    dims.push_back(*d);
    ranks.push_back(static_cast<int64_t>(d->size()));
  }
  KILN_ASSIGN_OR_RETURN(EinsumSpec spec, ParseEinsum(ctx.node(), eq, ranks));
  KILN_ASSIGN_OR_RETURN(std::vector<ir::Dim> sizes, LabelDims(ctx.node(), spec, dims));
  ir::Dims out;
  for (int l : spec.output) out.push_back(sizes[static_cast<size_t>(l)]);
  SetOutputDims(ctx, 0, dt, out);
  return Status::Ok();
}

}  // namespace kiln::ops
