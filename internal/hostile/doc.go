// Package hostile crafts the files a crafted-input attack would use against
// arrowagg — dictionary and decompression bombs, schemas nested or widened
// past every real file, footers of millions of row groups, pages of billions
// of nulls — small on disk and fast to write (Write gives each Case with its expected Answer), and its test
// runs the command on each one as a subprocess under an address-space limit:
// every case ends in the right answer or a clear refusal (exit 0 or 2),
// without a Go runtime error, in bounded time.
package hostile
