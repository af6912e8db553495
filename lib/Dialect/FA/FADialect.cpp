//===- FADialect.cpp - The fa dialect -------------------------------------===//

#include "fa/Dialect/FA/FADialect.h"
#include "fa/Dialect/FA/FAOps.h"


using namespace mlir;
using namespace fa;

#include "fa/Dialect/FA/FADialect.cpp.inc"
#include "fa/Dialect/FA/FAEnums.cpp.inc"

void FADialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "fa/Dialect/FA/FAOps.cpp.inc"
      >();
}
