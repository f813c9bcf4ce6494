// policy.h: the launch policy and state layouts of the kernels, the one table
// that the CUDA sources and the Go code that launches them share.
//
// agg.cu and ladder.cu include it; `go generate ./kernels` (make kernels)
// writes the same constants into policy.go (package kernels) with the
// generator kernels/internal/policygen, and package kernels's tests fail
// when policy.go is stale. Changing a value here changes the PTX: run
// `make kernels` and commit policy.go and the .ptx files with it.
//
// The format is what the generator reads: each constant is one line
// `#define AGG_<NAME> <integer literal>` or `#define LADDER_<NAME> <integer
// literal>`, its comment on the lines just above it; AGG_BLOCK_THREADS
// becomes kernels.AggBlockThreads. A blank line separates groups.

#ifndef ARROWAGG_KERNELS_POLICY_H
#define ARROWAGG_KERNELS_POLICY_H

// ------------------------------------------------------------------ agg.cu

// AGG_BLOCK_THREADS is the number of threads of every block of agg.cu's
// kernels (the per-kind, ordered and many-column kernels).
#define AGG_BLOCK_THREADS 256
// AGG_INT_MOMENT_MIN_BLOCKS is the number of blocks per multiprocessor the
// integer moments kernels are compiled to fit (__launch_bounds__: at most 64
// registers a thread), so that more loads are in flight on columns with
// nulls (measured on an H100: 2.20 -> 2.40 TB/s for int64 with 10% nulls).
#define AGG_INT_MOMENT_MIN_BLOCKS 4
// AGG_FLOAT_MOMENT_MIN_BLOCKS is the same for the float moments kernels:
// three blocks (80 registers), with which ptxas issues a thread's four
// vector loads before it folds the first (at 64 registers it sank the
// third and fourth below the folds of the first two; measured on an H200:
// float64 3.64 -> 4.10 TB/s, float32 2.93 -> 3.06).
#define AGG_FLOAT_MOMENT_MIN_BLOCKS 3
// AGG_WARP_THREADS is the number of threads of a warp.
#define AGG_WARP_THREADS 32
// AGG_UNROLL is the number of 16-byte vector loads a thread has in flight per
// iteration of its grid-stride loop.
#define AGG_UNROLL 4

// AGG_INTEGER_WORDS is the size in 64-bit words of the state of the signed
// and of the unsigned integers: {sum lo, sum hi, min, max, count}.
#define AGG_INTEGER_WORDS 5
// AGG_FLOAT_WORDS is the size in words of the float state: {sum,
// compensation, special, min key, max key, count}.
#define AGG_FLOAT_WORDS 6
// AGG_DECIMAL_WORDS is the size in words of the decimal state: {sum w0, w1,
// w2, min lo, min hi, max lo, max hi, count}.
#define AGG_DECIMAL_WORDS 8
// AGG_BOOL_WORDS is the size in words of the bool state: {trues, count}.
#define AGG_BOOL_WORDS 2
// AGG_MAX_WORDS is the size in words of the widest state of the
// many-column kernel (decimal): the room of a column's state there.
#define AGG_MAX_WORDS 8
// AGG_INTEGER_MOMENT_WORDS is the size in words of the state of the
// integers' moments kernels: the integer state, then the sum of the squares
// {sq w0, w1, w2} (192-bit).
#define AGG_INTEGER_MOMENT_WORDS 8
// AGG_FLOAT_MOMENT_WORDS is the size in words of the state of the floats'
// moments kernels: the float state, then {squares' sum, compensation,
// special}.
#define AGG_FLOAT_MOMENT_WORDS 9
// AGG_STATE_WORDS is the size in words of the widest state of a per-kind
// kernel (the floats' moments): the room of a block's partial state and of
// a launch's state.
#define AGG_STATE_WORDS 9
// AGG_ORDERED_INDEX_WORDS is the size in words of the ordered kernels'
// state between blocks: {first, last, first min, first max}.
#define AGG_ORDERED_INDEX_WORDS 4
// AGG_ORDERED_WORDS is the size in words of an ordered kernel's result:
// {first, last, first min, first max, first value lo, hi, last value lo, hi}.
#define AGG_ORDERED_WORDS 8
// AGG_NO_ROW is the ordered kernels' "no such element": -1 as an int64.
#define AGG_NO_ROW 0xffffffffffffffff

// AGG_SKETCH_PRECISION is the number of hash bits that pick a register of
// the approx_distinct sketch (agg.SketchPrecision).
#define AGG_SKETCH_PRECISION 14
// AGG_SKETCH_REGISTERS is the number of its registers (agg.SketchRegisters).
#define AGG_SKETCH_REGISTERS 16384
// AGG_SKETCH_EXACT is the most distinct hashes a sketch keeps and counts
// exactly (agg.SketchExact).
#define AGG_SKETCH_EXACT 1024
// AGG_SKETCH_BLOCK_SLOTS is the number of slots of a block's table of
// distinct hashes in shared memory (twice AGG_SKETCH_EXACT).
#define AGG_SKETCH_BLOCK_SLOTS 2048
// AGG_SKETCH_SLOTS is the number of slots of a device sketch's table of
// distinct hashes (four times AGG_SKETCH_EXACT).
#define AGG_SKETCH_SLOTS 4096
// AGG_SKETCH_BYTES is the size of a device sketch: AGG_SKETCH_REGISTERS
// 8-bit registers, AGG_SKETCH_SLOTS 64-bit slots, then 32-bit words
// {count, overflow, zero, reserved}.
#define AGG_SKETCH_BYTES 49168

// AGG_GROUP_ITEMS is the number of rows a thread of the grouped kernels
// (group.cuh) holds per tile: a block's tile is AGG_BLOCK_THREADS times as
// many consecutive rows.
#define AGG_GROUP_ITEMS 8
// AGG_GROUP_CLUSTER is the blocks of a cluster of a grouped kernel's grid:
// the last block of each cluster to finish merges its cluster's partials,
// and the last of those merges the clusters' (a launch's ticket is
// 1 + ceil(blocks / AGG_GROUP_CLUSTER) 32-bit counters).
#define AGG_GROUP_CLUSTER 16
// AGG_GROUP_MAX is the largest dense key domain of the grouped kernels (G
// groups of keys, the null key's group G beside them).
#define AGG_GROUP_MAX 4096
// AGG_GROUP_WIDE_MAX is the largest dense key domain of the wide grouped
// kernels (arrowagg_group_wide_<integer kind>: the groups' states in a
// table in device memory, folded by global atomics; integer values only).
#define AGG_GROUP_WIDE_MAX 67108864
// AGG_GROUP_WIDE_ENTRY_BYTES is the bytes of a group of a wide table:
// {sum modulo 2^64, rows and wraps, min key, max key} (64-bit), {count,
// unused} (32-bit).
#define AGG_GROUP_WIDE_ENTRY_BYTES 40
// AGG_GROUP_WIDE_ROWS is the most rows of one launch of a wide grouped
// kernel: its 32-bit counters and the wraps of its sums (a signed 32-bit
// half of a word) cannot overflow below it.
#define AGG_GROUP_WIDE_ROWS 2147483647
// AGG_GROUP_SHARED_BYTES is the most dynamic shared memory of a grouped
// kernel's block: the 48 KiB a block may use without opting in
// (cuFuncSetAttribute), less 2 KiB for its static shared variables (16
// bytes) and the 1 KiB a block of sm_80 and later reserves (cuobjdump
// --dump-resource-usage counts it), should it count. Its group table, and
// the floats' staged tile, lie within it; a domain whose table does not fit
// is folded in windows of groups, one launch each.
#define AGG_GROUP_SHARED_BYTES 47104
// AGG_GROUP_INT_ENTRY_BYTES is the bytes of a group of an integer table:
// {min, max} (64-bit), {rows, count, sum a0, a1, c0, c1} (32-bit).
#define AGG_GROUP_INT_ENTRY_BYTES 40
// AGG_GROUP_FLOAT_ENTRY_BYTES is the bytes of a group of a float table:
// {sum, compensation, special, min key, max key} (64-bit), {rows, count}
// (32-bit) and a spare 32-bit word (the folds' claims once; the windows
// are sized with it).
#define AGG_GROUP_FLOAT_ENTRY_BYTES 52
// AGG_GROUP_FLOAT_STAGE_BYTES is the bytes of the floats' staged tile:
// AGG_BLOCK_THREADS * AGG_GROUP_ITEMS rows of {value (64-bit), group
// (32-bit)}.
#define AGG_GROUP_FLOAT_STAGE_BYTES 24576
// AGG_GROUP_FLOAT_WARP_GROUPS is the most groups of a launch of a float
// grouped kernel whose block keeps a table per warp (each warp folds its
// own rows: AGG_BLOCK_THREADS / AGG_WARP_THREADS tables of
// AGG_GROUP_FLOAT_ENTRY_BYTES a group, and a staged step of
// AGG_WARP_THREADS rows of {value, group} per warp); a larger window keeps
// one table, each group's rows folded by one warp.
#define AGG_GROUP_FLOAT_WARP_GROUPS 96
// AGG_GROUP_FLOAT_THREAD_ENTRY_BYTES is the bytes of a group of a thread's
// table of sums (sum, compensation: 64-bit) in the float grouped kernels
// with a table per thread (arrowagg_group_threads_<float kind>); a block
// keeps AGG_BLOCK_THREADS of them a group, then the group's special
// (64-bit) and AGG_GROUP_FLOAT_THREAD_COPIES copies of the block's fields
// whose updates commute (AGG_GROUP_FLOAT_THREAD_SHARED_BYTES each).
#define AGG_GROUP_FLOAT_THREAD_ENTRY_BYTES 16
// AGG_GROUP_FLOAT_THREAD_SHARED_BYTES is the bytes of a copy of a group's
// fields whose updates commute (min key, max key: 64-bit; rows, null
// values: 32-bit) in a block with a table per thread.
#define AGG_GROUP_FLOAT_THREAD_SHARED_BYTES 24
// AGG_GROUP_FLOAT_THREAD_COPIES is the copies of the table of the fields
// whose updates commute in a block with a table per thread (lane l's
// atomics go to copy l % copies): a power of two, at most a warp's lanes.
#define AGG_GROUP_FLOAT_THREAD_COPIES 16
// AGG_GROUP_EXACT_LIMBS is the 32-bit limbs of a group's fixed-point sum in
// the exact float grouped kernels (arrowagg_group_exact_<float kind>): the
// values of a launch, scaled by the power of two below the largest of them
// (the launch's scale), summed exactly in 32 * AGG_GROUP_EXACT_LIMBS bits
// with a signed count of the carries out of the top limb.
#define AGG_GROUP_EXACT_LIMBS 5
// AGG_GROUP_EXACT_ENTRY_BYTES is the bytes of a copy of a group of an
// exact float table: {min key, max key} (64-bit), {rows, null values}
// (32-bit), AGG_GROUP_EXACT_LIMBS limbs (32-bit) and the count of the
// carries out of the top one (32-bit).
#define AGG_GROUP_EXACT_ENTRY_BYTES 48

// AGG_COLUMN_DESC_BYTES is the size of a column descriptor of the
// many-column kernel (ColumnDesc).
#define AGG_COLUMN_DESC_BYTES 56
// AGG_TILE_BYTES is the size of an entry of its work list (Tile).
#define AGG_TILE_BYTES 16

// --------------------------------------------------------------- ladder.cu

// LADDER_BLOCK is the block size of the ladder's kernels 7 to 13 and of
// every launch of the package ladder.
#define LADDER_BLOCK 256
// LADDER_MIN_BLOCK is the smallest block size a ladder kernel may be
// launched with: kernels 1 to 8 leave at most one partial per
// LADDER_MIN_BLOCK input elements.
#define LADDER_MIN_BLOCK 64
// LADDER_MAX_BLOCK is the largest block size of kernels 1 to 6 (the size of
// their shared-memory tree).
#define LADDER_MAX_BLOCK 512
// LADDER_WINDOW is the number of elements a thread of kernel 13 sums per
// pass, and the most partials it leaves to the host.
#define LADDER_WINDOW 8
// LADDER_MAX_STATE_BYTES is the size of the largest state of kernel 12's
// operators (the 2x2 matrix and first/last/count).
#define LADDER_MAX_STATE_BYTES 16

// ------------------------------------------------------------------ pq.cuh

// AGG_PQ_PAGE_BYTES is the size of a page of the Parquet page kernels' page
// table (PageDesc; internal/pqdev writes it).
#define AGG_PQ_PAGE_BYTES 56
// AGG_PQ_PAD is the padding before and after the page kernels' chunk and
// scratch buffers (and each scratch slot's end): the slack of the aligned
// 8-byte words that hold a misaligned value or a bit-packed index.
#define AGG_PQ_PAD 16
// AGG_PQ_FLAG_V2 marks a data page v2 (its levels stored apart, raw).
#define AGG_PQ_FLAG_V2 1
// AGG_PQ_FLAG_SNAPPY marks a page whose body is snappy-compressed.
#define AGG_PQ_FLAG_SNAPPY 2
// AGG_PQ_FLAG_DICT marks a page of dictionary indices (RLE_DICTIONARY,
// PLAIN_DICTIONARY).
#define AGG_PQ_FLAG_DICT 4
// AGG_PQ_FLAG_RLE marks a page of booleans RLE-encoded (a 4-byte length,
// then the RLE/bit-packed hybrid of bit width 1).
#define AGG_PQ_FLAG_RLE 8

// AGG_PQ_ERR_SNAPPY is the status of a page whose snappy stream is corrupt.
#define AGG_PQ_ERR_SNAPPY 1
// AGG_PQ_ERR_SNAPPY_LENGTH: the snappy stream's length is not the page
// header's uncompressed size.
#define AGG_PQ_ERR_SNAPPY_LENGTH 2
// AGG_PQ_ERR_LEVELS: the definition levels are corrupt or fewer than the
// page's values.
#define AGG_PQ_ERR_LEVELS 3
// AGG_PQ_ERR_VALUES: fewer PLAIN values than non-null levels.
#define AGG_PQ_ERR_VALUES 4
// AGG_PQ_ERR_BIT_WIDTH: the dictionary indices' bit width is above 32.
#define AGG_PQ_ERR_BIT_WIDTH 5
// AGG_PQ_ERR_INDEX: a dictionary index outside the dictionary.
#define AGG_PQ_ERR_INDEX 6
// AGG_PQ_ERR_INDICES: the dictionary indices are corrupt or fewer than the
// non-null levels.
#define AGG_PQ_ERR_INDICES 7
// AGG_PQ_ERR_BOOLS: RLE-encoded booleans that are corrupt or fewer than the
// non-null levels.
#define AGG_PQ_ERR_BOOLS 8

#endif  // ARROWAGG_KERNELS_POLICY_H
