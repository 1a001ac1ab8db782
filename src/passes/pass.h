// What every pass sees, and the list of passes (one file each in this
// folder). Only pipeline.cc decides which run, and in which order.
//
// A pass rewrites the main graph of a model in place and returns whether it
// changed anything. It rewrites only what it can prove keeps the model's
// meaning; anything it is unsure of (a value with another consumer, a graph
// output, an unknown shape or dtype) stays as it is. Subgraphs (If/Loop/Scan
// bodies) are not rewritten; values they read from the main graph are never
// renamed or removed.
#pragma once

#include <string>

#include "ir/graph.h"
#include "kiln/status.h"
#include "passes/pipeline.h"

namespace kiln::passes {

class PassContext {
 public:
  PassContext(ir::Model& model, PassReport* report) : model_(model), report_(report) {}
  ir::Model& model() { return model_; }
  const ir::Model& model() const { return model_; }
  int64_t OpsetFor(const std::string& domain) const { return model_.OpsetFor(domain); }
  // Adds a line to the report ("fold_constants: 12 nodes folded").
  void Note(const std::string& pass, const std::string& what);
  // Imports domain com.kiln version 1 (the fused ops' opset) before a pass
  // creates a fused node; false when the model already imports another
  // version of it, and then no fused node may be made.
  bool ImportKilnDomain();

 private:
  ir::Model& model_;
  PassReport* report_;
};

using PassFn = Result<bool> (*)(ir::Graph& g, PassContext& ctx);

// basic
Result<bool> FoldConstants(ir::Graph& g, PassContext& ctx);       // fold_constants.cc
Result<bool> EliminateDeadCode(ir::Graph& g, PassContext& ctx);   // eliminate_dead_code.cc
Result<bool> RemoveIdentity(ir::Graph& g, PassContext& ctx);      // remove_identity.cc
Result<bool> FoldShape(ir::Graph& g, PassContext& ctx);           // fold_shape.cc
// extended
Result<bool> FoldBatchNorm(ir::Graph& g, PassContext& ctx);               // fold_batchnorm.cc
Result<bool> FoldConvAffine(ir::Graph& g, PassContext& ctx);              // fold_conv_affine.cc
Result<bool> FuseConvActivation(ir::Graph& g, PassContext& ctx);          // fuse_conv_activation.cc
Result<bool> FuseResidualAdd(ir::Graph& g, PassContext& ctx);             // fuse_residual_add.cc
Result<bool> FusePostAffine(ir::Graph& g, PassContext& ctx);              // fuse_post_affine.cc
Result<bool> FuseSeparableConv(ir::Graph& g, PassContext& ctx);           // fuse_separable_conv.cc
Result<bool> FuseElementwise(ir::Graph& g, PassContext& ctx);             // fuse_elementwise.cc
Result<bool> SimplifyTransposeReshape(ir::Graph& g, PassContext& ctx);    // simplify_transpose_reshape.cc

}  // namespace kiln::passes
