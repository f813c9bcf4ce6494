// Package hostile crafts the files a crafted-input attack would use against
// arrowagg — dictionary and decompression bombs in Parquet pages and Arrow
// IPC buffers, compressed IPC buffers that claim 64 GiB, schemas nested or
// widened past every real file, footers of millions of row groups, pages of
// billions of nulls, a stream on standard input that announces a 1 TiB body
// and never ends — small on disk and fast to write (Write gives each Case
// with its expected Answer; Parquet through a hand-written thrift writer,
// IPC messages through the flatbuffers builder). Its test runs the command
// on each one as a subprocess under an address-space limit: every case ends
// in the right answer or a clear refusal (exit 0 or 2) naming the limit and
// the input, without a Go runtime error's text, in bounded time and with a
// peak resident set of at most 1 GiB; the cancel cases interrupt it while it
// decompresses a large page or buffer, and it must end soon after. The test
// logs a table of each case's size, exit status, time and peak RSS.
package hostile
