package dataset

import (
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// Limits that no real file reaches, stated once. An input beyond one is
// refused before the work it would cost, as a *arrow17.LimitError (wrapped
// in an *Error naming the file) that names the limit and the value found:
// a corrupt or crafted file, exit status 2 in the command. Each bounds a
// cost that would otherwise grow with a number the file declares, or
// protects a number that would overflow.
const (
	// MaxNestingDepth is the deepest a column may lie in a schema: 1 for a
	// top-level column, 2 for a field of a top-level struct (a Parquet
	// group), and so on; every level of lists, maps and unions counts.
	// Arrow C++'s IPC reader refuses schemas nested deeper than 64 (its
	// kMaxNestingDepth). In Parquet each optional or repeated level adds
	// one to the definition or repetition level of the leaves under it,
	// which arrow-go holds in int16: past 32767 they wrap around and
	// arrow-go decodes the wrong values without an error. Walking the
	// schema also costs arrow-go (and the leaves' paths and names) memory
	// per level of each leaf. 64 is far above the few levels of real
	// schemas and far below any overflow.
	MaxNestingDepth = 64

	// MaxLevel is the largest definition or repetition level a Parquet
	// column may have: one per level of nesting, so MaxNestingDepth (levels
	// of at most 7 bits, bitsFor(64)). Checked for every column chunk read.
	MaxLevel = MaxNestingDepth

	// MaxColumns is the most leaf columns a schema may have (Parquet leaf
	// columns; Arrow leaves, struct fields flattened). Arrow C++ refuses a
	// Parquet footer whose lists hold more than 1,000,000 entries (its
	// default thrift container size limit); every column costs arrow-go's
	// schema conversion and the selection memory and time.
	MaxColumns = 1 << 20

	// MaxSchemaElements is the most elements (groups and leaves) a Parquet
	// schema may have: two per leaf column, as lists and maps take.
	MaxSchemaElements = 2 * MaxColumns

	// MaxRowGroups is the most row groups a Parquet file may have (Arrow
	// C++'s container limit again). Each costs arrow-go's decoded footer
	// about a kilobyte per column chunk, and each column chunk a task.
	MaxRowGroups = 1 << 20

	// MaxColumnChunks is the most column chunks (row groups × leaf columns)
	// a Parquet file may have: the decoded footer holds every one of them
	// (several hundred bytes each in arrow-go's thrift structures).
	MaxColumnChunks = 1 << 24

	// MaxFooterBytes is the largest Parquet footer (the thrift FileMetaData)
	// read. arrow-go decodes it whole into thrift structures of about 15
	// bytes of memory per byte of footer (a footer of 192 MB of 3 million
	// row groups took 2.8 GiB), so 64 MiB costs about 1 GiB. Real footers
	// are kilobytes to a few megabytes.
	MaxFooterBytes = 64 << 20

	// footerMemory is what arrow-go's decoded footer takes per byte of the
	// footer (15 measured, see MaxFooterBytes): charged to the memory
	// budget while the dataset is open.
	footerMemory = 16

	// MaxChunkDecodeBytes bounds the memory arrow-go's decoders take for one
	// column chunk's dictionary: the dictionary page and its entries as the
	// decoder holds them (24 bytes each for BYTE_ARRAY and
	// FIXED_LEN_BYTE_ARRAY, twice while it decodes, see dictEntryBytes),
	// which a few kilobytes of zstd can declare by the billion. Writers cap
	// dictionary pages at about 1 MiB (arrow-go, Arrow C++ and parquet-mr
	// fall back to plain encoding beyond), so 1 GiB is far above them.
	MaxChunkDecodeBytes = 1 << 30

	// MaxBatches is the most record batches an Arrow IPC file may have (not
	// standard input, a stream that may run as long as its producer):
	// each costs a message decode and an engine call however few rows it
	// holds. Counted as the batches are read.
	MaxBatches = 1 << 24
)

// leafLimits are the limits of a schema walk (arrow17.LeavesContext).
var leafLimits = arrow17.LeafLimits{
	Depth: MaxNestingDepth, DepthName: "MaxNestingDepth",
	Leaves: MaxColumns, LeavesName: "MaxColumns",
}

// limitError is the error of value, of what, beyond limit name = max.
func limitError(what string, value int64, name string, max int64) error {
	return &arrow17.LimitError{What: what, Value: value, Limit: name, Max: max}
}
