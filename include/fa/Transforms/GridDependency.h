//===- GridDependency.h - Kernels launched as programmatic dependents ----===//
//
// What the compiler and the runtime agree on for programmatic dependent
// launch (PDL, sm_90+): fa-kernel-grid-dependency makes every kernel of a
// GPU module wait for the grid before it (griddepcontrol.wait) ahead of
// its first instruction, and marks the module with the global below; the
// runtime launches a kernel with programmatic stream serialisation only
// where its module holds that global.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TRANSFORMS_GRIDDEPENDENCY_H
#define FA_TRANSFORMS_GRIDDEPENDENCY_H

namespace fa {

/// The marker global of a module whose kernels all wait at entry.
inline constexpr const char kGridDependencyMarker[] = "fa_grid_dependency";

/// The first compute capability with griddepcontrol (sm_90).
inline constexpr int kGridDependencyMinArch = 90;

} // namespace fa

#endif // FA_TRANSFORMS_GRIDDEPENDENCY_H
