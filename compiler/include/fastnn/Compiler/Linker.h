//===- Linker.h - object file + runtime libraries -> executable -*- C++ -*-===//

#ifndef FASTNN_COMPILER_LINKER_H
#define FASTNN_COMPILER_LINKER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <string>

namespace fastnn {

/// Links `objectFiles` (in their order) with `inputs` (static libraries,
/// then `-l` flags) into the executable `output` by running the C++ compiler
/// driver `linker`. Returns false with `error` set (including the linker's
/// own message).
bool linkExecutable(llvm::StringRef linker,
                    llvm::ArrayRef<std::string> objectFiles,
                    llvm::ArrayRef<std::string> inputs, llvm::StringRef output,
                    std::string &error);

} // namespace fastnn

#endif // FASTNN_COMPILER_LINKER_H
