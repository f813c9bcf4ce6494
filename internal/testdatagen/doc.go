// Package testdatagen makes the files of testdata/: a Parquet file, an Arrow
// IPC file and an Arrow IPC stream of one schema holding every type the
// engine aggregates (and one it does not), with nulls, NaN, infinities,
// integer sums beyond 64 bits, several row groups and dictionary pages.
//
// The map of the package:
//
//   - Files lists the generated files (File: name, Format, rows, rows per
//     batch or row group, seed, columns left out); Format is Parquet,
//     IPCFile or IPCStream.
//   - Schema and Record give a file's schema and its rows [lo, hi), built
//     from the seed and the row number alone.
//   - Write writes every file into a directory.
//
// Every value is a function of the file's seed and the row number, and the
// writers are deterministic, so the files are the same bytes on every run.
//
// Who calls it: the command testdata/gen (make testdata) writes the files;
// the tests of cmd/arrowagg and dataset rebuild the rows with Record to check
// the aggregates independently of the files.
package testdatagen
