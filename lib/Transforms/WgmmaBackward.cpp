//===- WgmmaBackward.cpp - Attention backward on wgmma (sm_90a) -----------===//
