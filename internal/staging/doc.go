// Package staging schedules copies from pageable host memory to a device
// through a ring of page-locked slots: goroutines fill the slots, one
// goroutine per piece and several pieces at once, and the calling thread
// (the one that owns the device) enqueues each piece's copy, in order, as
// soon as its slot is full; a slot is refilled once the copy that reads it
// has completed.
//
// The map of the package:
//
//   - Ring is the staging itself: the slots (page-locked memory its caller
//     allocates), the fill goroutines (New), how a slot is filled (Fill:
//     FillCopy, or FillDemote, which also demotes the lines out of the
//     filling core's cache; fill.go and its assembly) and the smallest piece
//     a small transfer is cut into (MinPiece). Stats counts what the fills
//     cost and how long the device's thread waited.
//   - Transfer is one copy of host bytes to a device address; Direct ones
//     (already page-locked) bypass the slots. Ring.Copy moves a few
//     transfers at once.
//   - Stream carries one call's copies as groups of transfers (Ring.Begin,
//     Stream.Add, Finish, Close), each with work to enqueue before its first
//     copy and after its last one (a chunk: wait for its device buffer to be
//     free; launch the kernel that reads it). Fills run ahead across group
//     boundaries, so the slowest fill of one chunk does not hold up the next
//     chunk's.
//   - Device is what the package asks of the device: the copies, and marks
//     that say when a slot is free again.
//
// Who calls it: the CUDA backend (backend/cuda), whose Device is a CUDA
// stream and events. The package knows nothing of CUDA, so the scheduling
// is tested without a GPU, against a simulated device.
package staging
