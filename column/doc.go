// Package column gives physical views of Arrow columns: what every backend
// reads to aggregate a column without going through arrow.Array accessors.
//
// The map of the package:
//
//   - Kind is a column's storage kind (Int8 ... Uint64, Float16, Float32,
//     Float64, Bool, Decimal32, Decimal64, Decimal128, Binary, LargeBinary,
//     FixedSizeBinary; Opaque for the values only counted: lists, maps,
//     run-end encoded, unions, decimal256, views, ...; Unsupported), with its
//     element Width and its Family (signed, unsigned, float, bool, decimal,
//     bytes, counts), the unit the backends specialize their loops and
//     kernels on. KindOf maps an Arrow type to its kind, IndexKind a
//     dictionary's index type (kind.go). NarrowDecimalType is decimal32 and
//     decimal64, which arrow-go v17 lacks (decimal.go); HalfToFloat64 and
//     HalfFromFloat64 convert half-precision floats exactly (half.go).
//   - View is the layout of one contiguous column chunk: the values buffer
//     with its element offset and length, the validity bitmap with its bit
//     offset, the offsets of binary columns, and for dictionary arrays the
//     indices and the dictionary's own View; Row numbers its first element
//     in the whole stream for the ordered aggregates; an Opaque view has the
//     validity alone (for run-end encoded arrays, the runs' expanded; for
//     unions, the logical nulls of the child values they select).
//     ViewOf makes one from an array that is not a struct; Slice and Values
//     reinterpret its buffers as Go slices without copying (view.go).
//   - Leaf is one aggregatable column of a schema. Leaves flattens a schema
//     into its leaves, struct fields recursively with dotted names ("a.b"),
//     lists, maps and unions being leaves of their own (Opaque; a union's
//     nulls are those of the child values it selects, union.go), the
//     repeats of a name renamed N_1, N_2, ... so that names select, and
//     reports what cannot be aggregated (an empty struct) per column
//     (Leaf.Err), without failing the whole request; Find and Names
//     look leaves up. Extract sets a Column, the View of one leaf in one
//     record batch, folding the nulls of enclosing structs into the leaf's
//     validity (leaves.go).
//   - Element columns are the values inside lists and maps, named by a
//     path: "tags[]", "a[][]", "m{key}", "m{value}", "l[].x".
//     ResolveElement resolves one (with an error saying why a path does
//     not apply), ElementLeaves lists those of a schema, and Extract views
//     the elements that exist of a batch, skipping those under null lists
//     (path.go).
//
// Who calls it: the backends (backend/cpu's loops; backend/cuda, which
// uploads Views to the GPU), the planner and the engine, and package
// dataset, which reads Parquet pages and Arrow IPC batches into Views. It depends on
// arrow-go alone.
package column
