//===- TempDirectoryTest.h - A fresh directory per unit test ----*- C++ -*-===//

#ifndef FA_TEST_UNIT_TEMPDIRECTORYTEST_H
#define FA_TEST_UNIT_TEMPDIRECTORYTEST_H

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <string>

/// Each test gets an empty directory of its own (a cache directory), removed
/// afterwards.
class TempDirectoryTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fa-unit-test", dir));
    directory = std::string(dir);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(directory); }

  std::string directory;
};

#endif // FA_TEST_UNIT_TEMPDIRECTORYTEST_H
