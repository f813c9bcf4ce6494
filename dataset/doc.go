// Package dataset reads Parquet files, Arrow IPC files and Arrow IPC streams
// as one table and aggregates it with an engine.Engine.
//
// The format of an input is detected from its bytes, never from its name:
// Parquet has "PAR1" at both ends, an Arrow IPC file "ARROW1" at both ends,
// and an Arrow IPC stream starts with a schema message (after the 0xFFFFFFFF
// continuation marker, or the bare length prefix of the pre-1.0 format).
// Expand turns command-line paths (files, directories, globs, "-" for an IPC
// stream on standard input) into Sources.
//
// Reading Parquet: only the requested leaf columns are read, a column chunk
// (a row group of one leaf) per task, on Options.Workers goroutines. A
// column whose Parquet values are its Arrow values bit for bit (flat int32,
// int64, uint32, uint64, float, double, date32, time and timestamp columns,
// booleans, PLAIN or dictionary-encoded (booleans PLAIN or RLE), data pages
// v1 or v2, any codec), or a decimal stored as INT32 or INT64, is aggregated
// from its decompressed pages, in place: a file of the file system is
// mapped into memory and its pages read where they lie (mapped.go: a file
// truncated or rewritten while it is read is an error, never a crash),
// PLAIN values are folded where they lie in the page, dictionary pages as dictionary views over the dictionary
// page, and nulls are counted from the encoded definition levels; the
// engine folds them a morsel at a time, where its planner puts each window.
// Any other column (narrow integers, decimals stored in bytes, strings,
// DELTA encodings, leaves of structs, or every column with
// Options.ArrowDecode) is decoded into Arrow arrays through pqarrow, batch by
// batch, and aggregated by the engine. Lists and maps, whose count and
// null_count alone are aggregated, are counted from the definition and
// repetition levels of the first leaf column under them, batch by batch
// (pqlist.go). Chunk states are merged in file
// order, so results are the same whatever the number of workers. Memory is
// bounded by the workers and Options.DecodeBytes, not by the size of the
// file: a worker holds one chunk's buffers at a time. A page of more than
// 8 MiB (up to 1 GiB) is decompressed as a stream, a piece of 4 MiB at a
// time, stopping between pieces when the context is done; a large PLAIN
// page is folded from its stream a window at a time, never held whole
// (pqstream.go). IPC buffers decompress a piece at a time too.
//
// Encrypted Parquet files (modular encryption) are read given their keys
// (Options.Keys, encryption.go): arrow-go decrypts the footer, and pqarrow
// decodes the encrypted chunks, each worker on a reader of its own; a key
// missing or wrong is a *KeyError naming it.
//
// A walk over each chunk's page headers checks them (and, for the chunks
// arrow-go decodes, their dictionary indices and DELTA blocks, before
// arrow-go reads the chunk) against what the file justifies (pqwalk.go); the
// page path reads its pages from what that walk records of them, without
// parsing a header again. Corrupt files are errors, never huge allocations,
// endless loops or panics in goroutines that cannot recover them. When every
// aggregate asked for is count, null_count, min or max, row groups whose
// statistics give them exactly are answered from the footer without reading
// their pages (stats.go; AggregateOptions.IgnoreStatistics turns it off).
//
// Limits (limits.go) that no real file reaches bound what a crafted one
// could make the readers do: the nesting depth and the number of columns of
// a schema, the size of a Parquet footer and its row groups and column
// chunks, the memory arrow-go's decoders take for a chunk's dictionary, the
// batches of an IPC file. An input beyond one is refused before the work,
// with an error naming the file, the limit and the value. Schema walks and
// column lookups take time linear in the schema, and stop when the context
// is done. A panic of a decoder is reported as corrupt data where it
// happened (*CorruptError), the panic's text only as its detail.
//
// Reading IPC: files and streams batch by batch, the next batch decoded
// while the current one is aggregated, in order.
//
// The sources of a Dataset are one table: columns are matched by name (a
// name a schema repeats is N_k in its k-th repeat, arrow17.Leaves), and the
// same name with two types is an error naming both files. Every problem
// with an input is an *Error naming it.
package dataset
