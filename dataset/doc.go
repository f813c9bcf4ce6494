// Package dataset reads Parquet files, Arrow IPC files and Arrow IPC streams
// as one table and aggregates it with a gpuagg.Engine.
//
// The format of an input is detected from its bytes, never from its name:
// Parquet has "PAR1" at both ends, an Arrow IPC file "ARROW1" at both ends,
// and an Arrow IPC stream starts with a schema message (after the 0xFFFFFFFF
// continuation marker, or the bare length prefix of the pre-1.0 format).
// Expand turns command-line paths (files, directories, globs, "-" for an IPC
// stream on standard input) into Sources.
//
// Reading streams: Parquet row group by row group through pqarrow, decoding
// only the requested columns (in parallel, projecting only the needed leaves
// of struct columns) in batches of bounded size, several row groups at once
// when there are more workers than columns; IPC files and streams batch by
// batch. The next batch is decoded while the current one is aggregated, and
// batches are aggregated in file order. A few batches per row group in flight
// are in memory at once, whatever the size of the file.
//
// The sources of a Dataset are one table: columns are matched by name, and
// the same name with two types is an error naming both files. Every problem
// with an input is an *Error naming it.
package dataset
