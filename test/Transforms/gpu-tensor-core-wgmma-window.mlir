// The wgmma forward's window tiles (WgmmaEmitter::consumeKeyTiles). Where
// the window keeps its edges apart (tensor_core::windowEdgesApart: W at
// least the block's rows + block-n - 2; 4096 here), the consumers walk the
// leading masked tiles, the unmasked ones and the trailing masked ones in
// three loops (TileBuilder::edgePhase), so that each masked copy checks
// its own edge alone. A window of 300 keys beside three consumers' 192
// rows and 128-key tiles (318 needed) keeps the one masked loop that runs
// the unmasked loop at its turn (TileBuilder::phase's joined form).
// (Shorter windows run on mma.sync by default.)
// RUN: fa-opt %s --split-input-file --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma wgmma-groups=3" | FileCheck %s

// CHECK-LABEL: module(@apart_forward_wgmma_d64)
// CHECK: setmaxregister  increase 160
// CHECK-NOT: fa.tiles
// CHECK: fa.tiles = "keys.masked"
// CHECK-NOT: fa.tiles
// CHECK: fa.tiles = "keys.unmasked"
// CHECK-NOT: fa.tiles
// CHECK: fa.tiles = "keys.masked"
fa.kernel @apart {
  func.func @forward(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 4096
        : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
  }
}

// -----

// CHECK-LABEL: module(@joined_forward_wgmma_d64)
// CHECK: setmaxregister  increase 160
// CHECK-NOT: fa.tiles
// CHECK: fa.tiles = "keys.unmasked"
// CHECK-NOT: fa.tiles
// CHECK: fa.tiles = "keys.masked"
fa.kernel @joined {
  func.func @forward(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 300
        : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
  }
}
