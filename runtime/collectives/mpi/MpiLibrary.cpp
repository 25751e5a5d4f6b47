//===- MpiLibrary.cpp - MPI loaded at run time ----------------------------===//

#include "MpiLibrary.h"

#include <dlfcn.h>

#ifndef OPEN_MPI
#error "the handles below are OpenMPI's global objects"
#endif

namespace fastnn::collectives {

namespace {

/// Resolves Name into Into; on failure keeps the first missing name.
template <typename T>
void resolve(void *Library, const char *Name, T &Into, std::string &Missing) {
  Into = reinterpret_cast<T>(dlsym(Library, Name));
  if (!Into && Missing.empty())
    Missing = Name;
}

} // namespace

std::unique_ptr<MpiLibrary> MpiLibrary::load(std::string &Error) {
  // Global: OpenMPI's components, which libmpi dlopens itself, resolve
  // libmpi's symbols through the global scope. Never closed: MPI stays
  // loaded until the process exits.
  void *Library = dlopen(FASTNN_MPI_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
  if (!Library) {
    const char *Reason = dlerror();
    Error = std::string("a launcher started this process, but ") +
            FASTNN_MPI_LIBRARY + " cannot be loaded (" +
            (Reason ? Reason : "no reason given") +
            "): install OpenMPI's library (Debian and Ubuntu: libopenmpi3), "
            "or start train.bin alone";
    return nullptr;
  }
  auto Mpi = std::make_unique<MpiLibrary>();
  std::string Missing;
  resolve(Library, "MPI_Init_thread", Mpi->InitThread, Missing);
  resolve(Library, "MPI_Finalize", Mpi->Finalize, Missing);
  resolve(Library, "MPI_Abort", Mpi->Abort, Missing);
  resolve(Library, "MPI_Error_string", Mpi->ErrorString, Missing);
  resolve(Library, "MPI_Comm_set_errhandler", Mpi->CommSetErrhandler, Missing);
  resolve(Library, "MPI_Comm_rank", Mpi->CommRank, Missing);
  resolve(Library, "MPI_Comm_size", Mpi->CommSize, Missing);
  resolve(Library, "MPI_Comm_split_type", Mpi->CommSplitType, Missing);
  resolve(Library, "MPI_Comm_dup", Mpi->CommDup, Missing);
  resolve(Library, "MPI_Comm_free", Mpi->CommFree, Missing);
  resolve(Library, "MPI_Isend", Mpi->Isend, Missing);
  resolve(Library, "MPI_Irecv", Mpi->Irecv, Missing);
  resolve(Library, "MPI_Ibcast", Mpi->Ibcast, Missing);
  resolve(Library, "MPI_Iallreduce", Mpi->Iallreduce, Missing);
  resolve(Library, "MPI_Ialltoallv", Mpi->Ialltoallv, Missing);
  resolve(Library, "MPI_Iallgatherv", Mpi->Iallgatherv, Missing);
  resolve(Library, "MPI_Ibarrier", Mpi->Ibarrier, Missing);
  resolve(Library, "MPI_Test", Mpi->Test, Missing);
  resolve(Library, "MPI_Wait", Mpi->Wait, Missing);
  resolve(Library, "MPI_Cancel", Mpi->Cancel, Missing);
  resolve(Library, "MPI_Request_free", Mpi->RequestFree, Missing);
  // The objects behind mpi.h's OMPI_PREDEFINED_GLOBAL handles.
  resolve(Library, "ompi_mpi_comm_world", Mpi->CommWorld, Missing);
  resolve(Library, "ompi_mpi_comm_null", Mpi->CommNull, Missing);
  resolve(Library, "ompi_request_null", Mpi->RequestNull, Missing);
  resolve(Library, "ompi_mpi_errors_return", Mpi->ErrorsReturn, Missing);
  resolve(Library, "ompi_mpi_info_null", Mpi->InfoNull, Missing);
  resolve(Library, "ompi_mpi_datatype_null", Mpi->DatatypeNull, Missing);
  resolve(Library, "ompi_mpi_byte", Mpi->Byte, Missing);
  resolve(Library, "ompi_mpi_uint16_t", Mpi->Uint16, Missing);
  resolve(Library, "ompi_mpi_int64_t", Mpi->Int64, Missing);
  resolve(Library, "ompi_mpi_float", Mpi->Float, Missing);
  resolve(Library, "ompi_mpi_double", Mpi->Double, Missing);
  resolve(Library, "ompi_mpi_op_sum", Mpi->Sum, Missing);
  if (!Missing.empty()) {
    Error = std::string(FASTNN_MPI_LIBRARY) + " has no " + Missing +
            ": it is not the OpenMPI library this program was built "
            "against";
    return nullptr;
  }
  return Mpi;
}

std::string MpiLibrary::errorText(int Code) const {
  char Text[MPI_MAX_ERROR_STRING];
  int Length = 0;
  if (ErrorString(Code, Text, &Length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(Code);
  return std::string(Text, static_cast<size_t>(Length));
}

} // namespace fastnn::collectives
