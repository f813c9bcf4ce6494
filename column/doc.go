// Package column gives physical views of columns: what every backend reads
// to aggregate a column, whatever Arrow implementation (or file reader) owns
// its memory. It depends on no Arrow Go version (nor does any package of the
// core: agg, the backends, the planner); the front ends turn their version's
// arrays into views (package column/arrow17 for Arrow Go v17).
//
// The map of the package:
//
//   - Kind is a column's storage kind (Int8 ... Uint64, Float16, Float32,
//     Float64, Bool, Decimal32, Decimal64, Decimal128, Binary, LargeBinary,
//     FixedSizeBinary; Opaque for the values only counted: lists, maps,
//     run-end encoded, unions, decimal256, views, ...; Unsupported), with its
//     element Width and its Family (signed, unsigned, float, bool, decimal,
//     bytes, counts), the unit the backends specialize their loops and
//     kernels on (kind.go). HalfToFloat64 and HalfFromFloat64 convert
//     half-precision floats exactly (half.go).
//   - View is the layout of one contiguous column chunk: the values buffer
//     with its element offset and length (and, for FixedSizeBinary, the
//     values' Width), the validity bitmap with its bit offset, the offsets
//     of binary columns, and for dictionary arrays the indices and the
//     dictionary's own View; Row numbers its first element in the whole
//     stream for the ordered aggregates; an Opaque view has the validity
//     alone. Its Type is the source's name of the logical type (an Arrow
//     DataType of any version satisfies it), read only for messages. Check
//     validates a view of memory from outside, Sub cuts one, Slice and
//     Values reinterpret its buffers as Go slices without copying (view.go).
//   - Validity bitmaps are read with BitIsSet and CountSetBits (bitmap.go).
//
// Who calls it: the backends (backend/cpu's loops; backend/cuda, which
// uploads Views to the GPU), the planner and the engine, and the sources
// (package dataset, which reads Parquet pages and Arrow IPC batches into
// Views; column/arrow17, which views Arrow Go v17 arrays). It imports no
// other package of the module.
package column
