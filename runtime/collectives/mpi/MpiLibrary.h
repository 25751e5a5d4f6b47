//===- MpiLibrary.h - MPI loaded at run time --------------------*- C++ -*-===//
//
// The MPI functions and predefined handles the communicator uses, resolved
// from libmpi when a launcher started the process. train.bin does not link
// libmpi, so it starts where OpenMPI is not installed (a GPU machine) and a
// process started alone never loads it. The communicator is compiled
// against OpenMPI's mpi.h for its types; every call and every handle goes
// through this table. In OpenMPI a handle (MPI_COMM_WORLD, MPI_FLOAT,
// MPI_SUM...) is the address of a global object of libmpi, so the table
// holds those addresses.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_COLLECTIVES_MPI_MPILIBRARY_H
#define FASTNN_RUNTIME_COLLECTIVES_MPI_MPILIBRARY_H

#include <mpi.h>

#include <memory>
#include <string>

namespace fastnn::collectives {

struct MpiLibrary {
  /// dlopens libmpi (the soname the build found) and resolves every entry;
  /// nullptr with Error naming the library and what to install.
  static std::unique_ptr<MpiLibrary> load(std::string &Error);

  /// MPI's text for an error code.
  std::string errorText(int Code) const;

  decltype(&MPI_Init_thread) InitThread;
  decltype(&MPI_Finalize) Finalize;
  decltype(&MPI_Abort) Abort;
  decltype(&MPI_Error_string) ErrorString;
  decltype(&MPI_Comm_set_errhandler) CommSetErrhandler;
  decltype(&MPI_Comm_rank) CommRank;
  decltype(&MPI_Comm_size) CommSize;
  decltype(&MPI_Comm_split_type) CommSplitType;
  decltype(&MPI_Comm_dup) CommDup;
  decltype(&MPI_Comm_free) CommFree;
  decltype(&MPI_Isend) Isend;
  decltype(&MPI_Irecv) Irecv;
  decltype(&MPI_Ibcast) Ibcast;
  decltype(&MPI_Iallreduce) Iallreduce;
  decltype(&MPI_Ialltoallv) Ialltoallv;
  decltype(&MPI_Iallgatherv) Iallgatherv;
  decltype(&MPI_Ibarrier) Ibarrier;
  decltype(&MPI_Test) Test;
  decltype(&MPI_Wait) Wait;
  decltype(&MPI_Cancel) Cancel;
  decltype(&MPI_Request_free) RequestFree;

  MPI_Comm CommWorld, CommNull;
  MPI_Request RequestNull;
  MPI_Errhandler ErrorsReturn;
  MPI_Info InfoNull;
  MPI_Datatype DatatypeNull, Byte, Uint16, Int64, Float, Double;
  MPI_Op Sum;
};

} // namespace fastnn::collectives

#endif // FASTNN_RUNTIME_COLLECTIVES_MPI_MPILIBRARY_H
