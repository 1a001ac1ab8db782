// Helpers the passes share: who produces and who reads each value, the
// constant value of a name, load-time types, fresh names, and the few graph
// edits every pass makes (erase nodes, bypass a node, rewrite to a fixpoint).
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::passes {

// Producers and readers of the values of one graph, as it is when built:
// rebuild after an edit.
class GraphIndex {
 public:
  explicit GraphIndex(const ir::Graph& g);

  struct Use {
    size_t node;
    size_t slot;
  };
  // Index of the node that produces v; nullopt for graph inputs,
  // initializers and names produced by nothing.
  std::optional<size_t> Producer(const std::string& v) const;
  const std::vector<Use>& Consumers(const std::string& v) const;
  bool IsGraphOutput(const std::string& v) const { return outputs_.count(v) != 0; }
  bool IsGraphInput(const std::string& v) const { return inputs_.count(v) != 0; }
  // Read by name inside a subgraph (If/Loop/Scan body) of some node.
  bool ReadBySubgraph(const std::string& v) const { return subgraph_reads_.count(v) != 0; }
  // Node input slots + subgraph reads + graph output.
  size_t UseCount(const std::string& v) const;
  // v feeds exactly one input slot of one node, and nothing else sees it:
  // the value may disappear when that node is rewritten.
  bool OnlyFeeds(const std::string& v, size_t node) const;
  // The value of v when it is constant for every run: an initializer that is
  // not a graph input (those are defaults a user may feed), or the output of
  // a Constant node with a tensor `value`.
  const Tensor* Constant(const std::string& v) const;

 private:
  const ir::Graph& g_;
  std::unordered_map<std::string, size_t> producer_;
  std::unordered_map<std::string, std::vector<Use>> consumers_;
  std::unordered_set<std::string> outputs_, inputs_, subgraph_reads_;
};

// Types of the main graph's values after load-time inference, as the
// executor computes them (initializers and Constant values known). A node
// whose inference fails leaves its outputs unknown: a pass then does not
// rewrite around it.
using TypeMap = std::unordered_map<std::string, ir::TypeInfo>;
TypeMap InferTypes(const ir::Model& model);
DType DTypeOf(const TypeMap& types, const std::string& v);
std::optional<ir::Dims> DimsOf(const TypeMap& types, const std::string& v);
// The shape when every dim is known.
std::optional<Shape> StaticShape(const TypeMap& types, const std::string& v);
// Whether a and b have the same shape on every run: the same rank, and each
// dim pair known and equal or named by the same dim_param (a name means one
// value per run; ops/conv.h names the dims convolutions derive from one).
bool ProvablySameShape(const TypeMap& types, const std::string& a, const std::string& b);

// Names not used anywhere in the graph or its subgraphs.
class NameSet {
 public:
  explicit NameSet(const ir::Graph& g);
  std::string Fresh(const std::string& base);

 private:
  std::set<std::string> used_;
};

// Removes the nodes marked dead, keeping the order of the others.
void EraseNodes(ir::Graph& g, const std::vector<bool>& dead);
// Every main-graph node input named `from` reads `to` instead.
void ReplaceUses(ir::Graph& g, const std::string& from, const std::string& to);

// Removes node `n` whose output `out_slot` is the same value as its input
// `in_slot` (Identity, inference Dropout, an identity Transpose): readers
// read the input instead. When the output is a graph output, its name must
// stay: the input's producer is renamed to it instead, when that is possible
// (the input is produced by a node, is no graph input or output and is not
// read by a subgraph). Any other output of `n` must be unused. Returns
// whether the node was removed.
bool Bypass(ir::Graph& g, const GraphIndex& index, size_t n, size_t in_slot = 0, size_t out_slot = 0);

// Calls `rewrite` on each node (by index, with a fresh index of the graph)
// until no call changes anything; a call returns whether it rewrote, and
// after a rewrite the scan starts over. Returns the number of rewrites.
using RewriteFn = std::function<Result<bool>(ir::Graph& g, const GraphIndex& index, size_t node)>;
Result<int> RewriteAll(ir::Graph& g, const RewriteFn& rewrite);

// Helpers on constants.
// The single element of a one-element tensor as double; nullopt otherwise.
std::optional<double> ScalarValue(const Tensor* t);
// Elements as int64 (integer tensors only).
std::optional<std::vector<int64_t>> IntValues(const Tensor* t);
bool IsDefaultDomain(const ir::Node& n);

}  // namespace kiln::passes
