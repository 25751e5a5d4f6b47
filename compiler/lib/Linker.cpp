//===- Linker.cpp - object file + runtime libraries -> executable ---------===//

#include "fastnn/Compiler/Linker.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

bool fastnn::linkExecutable(llvm::StringRef linker,
                            llvm::ArrayRef<std::string> objectFiles,
                            llvm::ArrayRef<std::string> inputs,
                            llvm::StringRef output, std::string &error) {
  llvm::ErrorOr<std::string> program = llvm::sys::findProgramByName(linker);
  if (!program) {
    error = "cannot find the linker driver '" + linker.str() + "'";
    return false;
  }
  llvm::SmallString<128> log;
  if (llvm::sys::fs::createTemporaryFile("fastnnc-link", "log", log)) {
    error = "cannot create a temporary file for the linker's messages";
    return false;
  }
  std::vector<llvm::StringRef> args = {*program, "-o", output};
  for (const std::string &objectFile : objectFiles)
    args.push_back(objectFile);
  for (const std::string &input : inputs)
    args.push_back(input);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                log.str()};
  int status = llvm::sys::ExecuteAndWait(*program, args, std::nullopt,
                                         redirects, 0, 0, &error);
  if (status != 0) {
    auto messages = llvm::MemoryBuffer::getFile(log);
    std::string text = messages ? (*messages)->getBuffer().trim().str() : "";
    for (char &c : text)
      if (c == '\n')
        c = ' ';
    error =
        "linking " + output.str() + " failed: " + (text.empty() ? error : text);
  }
  llvm::sys::fs::remove(log);
  return status == 0;
}
