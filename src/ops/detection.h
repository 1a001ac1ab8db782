// NonMaxSuppression (opsets 10, 11): the attribute parser shared by shape
// inference and the kernels.
#pragma once

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

// center_point_box: 0 = corners [y1, x1, y2, x2] (either order per axis),
// 1 = [x_center, y_center, width, height]. True for the center format.
Result<bool> ParseNonMaxSuppressionCenterPointBox(const ir::Node& node);

}  // namespace kiln::ops
