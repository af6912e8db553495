//===- HostCodeTest.cpp - What fa's host code carries --------------------===//

#include "fa/Runtime.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <string>

namespace {

// fa's host code never throws and is never unwound through, so it has no
// unwind tables: with them the JIT registered each engine's .eh_frame with
// the unwinder, and after an engine was destroyed the next C++ exception
// in the process crashed in _Unwind_Find_FDE or corrupted the heap (issue
// 15). The JIT and the export share the step that drops them; the export's
// object shows what the JIT gets.
TEST(HostCode, CarriesNoUnwindTables) {
  const std::string spec = R"(
fa.kernel @softmax_matmul {
  func.func @forward(%x: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>)
      -> tensor<?x?x?xf32> {
    %out = fa.softmax_matmul %x, %v
        : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    return %out : tensor<?x?x?xf32>
  }
})";
  fa::ExportedSpec exported;
  std::string error;
  ASSERT_TRUE(fa::compileForExport(spec, "<spec>", fa::CompileOptions(),
                                   "sm_80", exported, error))
      << error;
  auto object = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(exported.hostObject, "host.o"));
  ASSERT_TRUE(bool(object)) << llvm::toString(object.takeError());
  int functions = 0;
  for (const llvm::object::SectionRef &section : (*object)->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    ASSERT_TRUE(bool(name));
    EXPECT_NE(*name, ".eh_frame");
    functions += section.isText() && section.getSize() > 0;
  }
  EXPECT_GT(functions, 0); // the object does hold the host code
}

} // namespace
