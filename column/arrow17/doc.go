// Package arrow17 turns Arrow Go v17 arrays and schemas into the column
// views of package column: the v17 front end's half of the one path for
// data (the core, column and what reads views, imports no Arrow version).
//
// The map of the package:
//
//   - KindOf maps a v17 type to its storage kind, IndexKind a dictionary's
//     index type; their errors wrap arrow.ErrNotImplemented (kind.go).
//     NarrowDecimalType is decimal32 and decimal64, which arrow-go v17
//     lacks (decimal.go).
//   - ViewOf makes the View of an array that is not a struct, borrowing its
//     buffers: an Opaque view has the array's validity and no values (for
//     run-end encoded arrays, the runs' expanded; for unions, the logical
//     nulls of the child values they select, union.go); OwnsValidity says
//     which views make a bitmap of their own (view.go).
//   - Leaf is one aggregatable column of a schema. Leaves flattens a schema
//     into its leaves, struct fields recursively with dotted names ("a.b"),
//     lists, maps and unions being leaves of their own (Opaque), the
//     repeats of a name renamed N_1, N_2, ... so that names select, and
//     reports what cannot be aggregated (an empty struct) per column
//     (Leaf.Err), without failing the whole request; Find and Names look
//     leaves up. Extract sets a Column, the View of one leaf in one record
//     batch, folding the nulls of enclosing structs into the leaf's
//     validity (leaves.go).
//   - Element columns are the values inside lists and maps, named by a
//     path: "tags[]", "a[][]", "m{key}", "m{value}", "l[].x".
//     ResolveElement resolves one (with an error saying why a path does
//     not apply), ElementLeaves lists those of a schema, and Extract views
//     the elements that exist of a batch, skipping those under null lists
//     (path.go).
//
// Who calls it: the v17 front ends (engine, gpuagg) and package dataset.
package arrow17
