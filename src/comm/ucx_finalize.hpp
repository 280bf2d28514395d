// Keeps MPI_Finalize from hanging over UCX's TCP transport (Debian 12's MPICH 4.0 with UCX 1.13). MPICH's
// finalize closes every UCX endpoint, waits for the closes, then blocks in a PMI barrier; closing a TCP endpoint
// that has sent data needs an acknowledgement that the peer sends only while it progresses UCX, and a peer that
// sits in the barrier never does, so the ranks wait on each other forever (MPICH 4.2 changed the order). From
// MPICH's first endpoint close until it destroys the UCX worker, a thread of ours progresses the worker, every
// UCX call MPICH makes meanwhile serialised with it.
//
// It works by dynamic symbol interposition: the program defines the UCX entry points MPICH calls, exports them
// (the executable is linked with export_dynamic), and forwards each to UCX's own. No LD_PRELOAD, no setting.
#pragma once

namespace fedavg::comm {

// Makes sure the interposed entry points are part of the program (call once, before MPI_Init). Returns false if
// this process's MPI does not call UCX through them (another MPI, or a program linked without export_dynamic).
bool ucx_finalize_progress_linked();

}  // namespace fedavg::comm
