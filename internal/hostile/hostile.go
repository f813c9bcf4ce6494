package hostile

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Case is one hostile input and what arrowagg must make of it.
type Case struct {
	Name string
	Path string   // the file written
	Args []string // arguments before the path (besides the suite's own)
	// Refuse, when set, is a text the refusal (exit status 2) must contain
	// on stderr: the limit's name, say. Empty: the input is valid, and
	// Want is its answer.
	Refuse string
	Want   Answer
	// Stdin: the command reads the file on standard input ("-", through a
	// pipe), and a refusal names "stdin". Endless: zero bytes follow the
	// file's for as long as the command reads them.
	Stdin, Endless bool
	// Cancel: the command is interrupted (SIGINT) once it is busy on the
	// file, and must end as interrupted (exit status 130, "interrupted")
	// soon after; Refuse and Want do not apply.
	Cancel bool
	// Memory, when set, is the case's memory budget in bytes (--memory):
	// more than the default, for a case that must be busy on what the
	// default budget refuses. Zero: the default budget.
	Memory int64
}

// Input is how the command's messages name the case's input.
func (c Case) Input() string {
	if c.Stdin {
		return "stdin"
	}
	return c.Path
}

// Answer is the part of `arrowagg --format json` a case checks: the rows,
// and per column, in order, the count, null count, sum, min and max as
// their JSON text ("null" when there is none).
type Answer struct {
	Rows    int64
	Columns []Column
}

// Column is one column of an Answer.
type Column struct {
	Name             string
	Count, NullCount int64
	Sum, Min, Max    string
}

// Write writes the files of every case into dir and returns the cases.
func Write(dir string) ([]Case, error) {
	var cases []Case
	for _, g := range generators {
		c, err := g(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		cases = append(cases, c)
	}
	return cases, nil
}

var generators = []func(dir string) (Case, error){
	func(dir string) (Case, error) { return flbaDictionary(dir) },
	func(dir string) (Case, error) { return stringDictionary(dir) },
	func(dir string) (Case, error) { return deep(dir, 32768, "MaxNestingDepth") },
	func(dir string) (Case, error) { return deep(dir, 30000, "MaxNestingDepth") },
	func(dir string) (Case, error) { return deep(dir, 100000, "MaxNestingDepth") },
	func(dir string) (Case, error) { return deep(dir, 63, "") },
	func(dir string) (Case, error) { return deep(dir, 64, "MaxNestingDepth") },
	func(dir string) (Case, error) { return manyColumns(dir, 100000) },
	func(dir string) (Case, error) { return manyFields(dir, 100000) },
	func(dir string) (Case, error) { return rowGroups(dir, 3000000, "MaxFooterBytes") },
	func(dir string) (Case, error) { return rowGroups(dir, 100000, "") },
	func(dir string) (Case, error) { return bigPages(dir, codecZstd, 8) },
	func(dir string) (Case, error) { return bigPages(dir, codecGzip, 1) },
	func(dir string) (Case, error) { return bigPages(dir, codecBrotli, 1) },
	func(dir string) (Case, error) { return nullPages(dir, 64) },
	func(dir string) (Case, error) { return claim(dir, ipcZstd, false) },
	func(dir string) (Case, error) { return claim(dir, ipcZstd, true) },
	func(dir string) (Case, error) { return claim(dir, ipcLZ4, false) },
	func(dir string) (Case, error) { return claim(dir, ipcLZ4, true) },
	func(dir string) (Case, error) { return ipcZeros(dir, true) },
	func(dir string) (Case, error) { return ipcZeros(dir, false) },
	func(dir string) (Case, error) { return endlessBody(dir) },
	func(dir string) (Case, error) { return grouped(dir, "d", flbaDictionary) },
	func(dir string) (Case, error) { return grouped(dir, "s", stringDictionary) },
	func(dir string) (Case, error) {
		return cancelled(dir, 2<<30, func(dir string) (Case, error) { return bigPages(dir, codecZstd, 8) })
	},
	func(dir string) (Case, error) {
		return cancelled(dir, 9<<29, func(dir string) (Case, error) { return ipcZeros(dir, true) })
	},
}

// cancelled: the case g writes (into a directory of its own), as a cancel
// case: the command is interrupted while it is busy on the file, under a
// memory budget of memory bytes, one that lets it decompress the file's
// large page or buffer whole.
func cancelled(dir string, memory int64, g func(dir string) (Case, error)) (Case, error) {
	sub := filepath.Join(dir, "cancel")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return Case{Name: "cancel"}, err
	}
	c, err := g(sub)
	c.Name, c.Cancel, c.Memory, c.Refuse = "cancel-"+c.Name, true, memory, ""
	return c, err
}

// grouped: the refusal case g writes (into a directory of its own), its
// rows grouped by column key (--group-by), which reads them through the
// grouped route: refused as without grouping.
func grouped(dir, key string, g func(dir string) (Case, error)) (Case, error) {
	sub := filepath.Join(dir, "grouped")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return Case{Name: "grouped"}, err
	}
	c, err := g(sub)
	c.Name, c.Args = "grouped-"+c.Name, append(c.Args, "--group-by", key)
	return c, err
}

// flbaDictionary: a FIXED_LEN_BYTE_ARRAY(1) decimal column whose zstd
// dictionary page of 33 KB holds 2^30 entries, which arrow-go's dictionary
// decoder would hold at 24 bytes (and more) each. The page path, which
// reads such decimals, charges the page decompressed (1 GiB) and the
// entries widened (16 GiB) to the memory budget first: refused by it.
func flbaDictionary(dir string) (Case, error) {
	c := Case{Name: "flba-dictionary-2^30", Path: filepath.Join(dir, "flba-dict.parquet"), Refuse: "--memory"}
	el := leaf("d", typeFixedLen, repOptional)
	el.typeLen, el.conv, el.precison, el.scale = 1, convDecimal, 2, 0
	return c, dictionaryBomb(c.Path, el, 1<<30, 1<<30)
}

// stringDictionary: a string column whose zstd dictionary page of 33 KB
// holds 2^28 empty strings.
func stringDictionary(dir string) (Case, error) {
	c := Case{Name: "string-dictionary-2^28", Path: filepath.Join(dir, "string-dict.parquet"), Refuse: "MaxChunkDecodeBytes"}
	el := leaf("s", typeByteArr, repOptional)
	el.conv = convUTF8
	return c, dictionaryBomb(c.Path, el, 1<<28, 1<<30)
}

// dictionaryBomb writes a file of one optional column el, one row, whose
// dictionary page declares n entries in unc zero bytes (zstd), and whose
// data page's one index is 0.
func dictionaryBomb(path string, el element, n, unc int64) error {
	p, err := newPQ(path)
	if err != nil {
		return err
	}
	z, err := zeroStream(codecZstd, unc)
	if err != nil {
		return err
	}
	dictAt, dictLen := p.rawPage(pageDict, int32(n), encPlain, int32(unc), z)
	body := append(levelsV1(1, 1, 1), 1, 2, 0) // bit width 1, a run of one 0
	dataAt, dataLen := p.page(pageData, 1, encRLEDict, codecZstd, body)
	ch := chunk{typ: el.typ, path: []string{el.name}, codec: codecZstd, values: 1, dataOff: dataAt, dictOff: dictAt,
		size: dictLen + dataLen, uncompSize: unc + int64(len(body))}
	return p.finish([]element{group("schema", repRequired, 1), el}, 1, []rowGroup{{rows: 1, chunks: []chunk{ch}}})
}

// deep: an int64 column holding 42 in its one row, under depth optional
// groups: refused when refuse is set (the limit), else answered.
func deep(dir string, depth int, refuse string) (Case, error) {
	c := Case{Name: fmt.Sprintf("nested-%d-deep", depth), Path: filepath.Join(dir, fmt.Sprintf("deep-%d.parquet", depth)), Refuse: refuse}
	schema := []element{group("schema", repRequired, 1)}
	path := make([]string, 0, depth+1)
	for i := 0; i < depth; i++ {
		schema = append(schema, group("g", repOptional, 1))
		path = append(path, "g")
	}
	schema = append(schema, leaf("x", typeInt64, repOptional))
	path = append(path, "x")
	c.Want = Answer{Rows: 1, Columns: []Column{{Name: strings.Join(path, "."), Count: 1, Sum: "42", Min: "42", Max: "42"}}}
	p, err := newPQ(c.Path)
	if err != nil {
		return c, err
	}
	maxDef := depth + 1
	body := binary.LittleEndian.AppendUint64(levelsV1(1, maxDef, bitWidth(maxDef)), 42)
	at, n := p.page(pageData, 1, encPlain, codecNone, body)
	ch := chunk{typ: typeInt64, path: path, codec: codecNone, values: 1, dataOff: at, size: n, uncompSize: n}
	return c, p.finish(schema, 1, []rowGroup{{rows: 1, chunks: []chunk{ch}}})
}

// manyColumns: n int32 columns of one row, column i holding i.
func manyColumns(dir string, n int) (Case, error) {
	c := Case{Name: fmt.Sprintf("parquet-%d-columns", n), Path: filepath.Join(dir, "columns.parquet")}
	p, err := newPQ(c.Path)
	if err != nil {
		return c, err
	}
	schema := []element{group("schema", repRequired, int32(n))}
	rg := rowGroup{rows: 1}
	c.Want.Rows = 1
	for i := 0; i < n; i++ {
		name := "c" + strconv.Itoa(i)
		schema = append(schema, leaf(name, typeInt32, repRequired))
		at, size := p.page(pageData, 1, encPlain, codecNone, binary.LittleEndian.AppendUint32(nil, uint32(i)))
		rg.chunks = append(rg.chunks, chunk{typ: typeInt32, path: []string{name}, codec: codecNone, values: 1, dataOff: at, size: size, uncompSize: size})
		v := strconv.Itoa(i)
		c.Want.Columns = append(c.Want.Columns, Column{Name: name, Count: 1, Sum: v, Min: v, Max: v})
	}
	return c, p.finish(schema, 1, []rowGroup{rg})
}

// manyFields: an Arrow IPC file of n int32 fields of one row, field i
// holding i.
func manyFields(dir string, n int) (Case, error) {
	c := Case{Name: fmt.Sprintf("ipc-%d-fields", n), Path: filepath.Join(dir, "fields.arrow")}
	fields := make([]arrow.Field, n)
	cols := make([]arrow.Array, n)
	c.Want.Rows = 1
	mem := memory.DefaultAllocator
	for i := range fields {
		name := "f" + strconv.Itoa(i)
		fields[i] = arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int32}
		b := array.NewInt32Builder(mem)
		b.Append(int32(i))
		cols[i] = b.NewArray()
		b.Release()
		v := strconv.Itoa(i)
		c.Want.Columns = append(c.Want.Columns, Column{Name: name, Count: 1, Sum: v, Min: v, Max: v})
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecord(schema, cols, 1)
	defer rec.Release()
	for _, a := range cols {
		a.Release()
	}
	f, err := os.Create(c.Path)
	if err != nil {
		return c, err
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err == nil {
		err = w.Write(rec)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return c, err
}

// rowGroups: n row groups of one int32 row each, 7, every column chunk the
// same page.
func rowGroups(dir string, n int, refuse string) (Case, error) {
	c := Case{Name: fmt.Sprintf("%d-row-groups", n), Path: filepath.Join(dir, fmt.Sprintf("rowgroups-%d.parquet", n)), Refuse: refuse}
	c.Want = Answer{Rows: int64(n), Columns: []Column{{Name: "v", Count: int64(n), Sum: strconv.Itoa(7 * n), Min: "7", Max: "7"}}}
	p, err := newPQ(c.Path)
	if err != nil {
		return c, err
	}
	at, size := p.page(pageData, 1, encPlain, codecNone, binary.LittleEndian.AppendUint32(nil, 7))
	ch := chunk{typ: typeInt32, path: []string{"v"}, codec: codecNone, values: 1, dataOff: at, size: size, uncompSize: size}
	rgs := make([]rowGroup, n)
	chunks := []chunk{ch}
	for i := range rgs {
		rgs[i] = rowGroup{rows: 1, chunks: chunks}
	}
	return c, p.finish([]element{group("schema", repRequired, 1), leaf("v", typeInt32, repRequired)}, int64(n), rgs)
}

// brotliPageBytes is the size of the brotli case's page: 1 GiB, but a
// quarter of that under the race detector, where compressing (in Go) takes
// 20 s a GiB.
var brotliPageBytes int64 = 1 << 30

// bigPages: an int32 column of pages pages of 2^28 zeros each (1 GiB
// decompressed; brotliPageBytes for brotli), compressed with codec.
func bigPages(dir string, codec int32, pages int) (Case, error) {
	c := Case{Name: fmt.Sprintf("%s-%dx1GiB-pages", codecNames[codec], pages), Path: filepath.Join(dir, fmt.Sprintf("pages-%s.parquet", codecNames[codec]))}
	values := int64(1 << 28)
	if codec == codecBrotli {
		values = brotliPageBytes / 4
	}
	rows := int64(pages) * values
	c.Want = Answer{Rows: rows, Columns: []Column{{Name: "z", Count: rows, Sum: "0", Min: "0", Max: "0"}}}
	return c, zeroPages(c.Path, codec, values, 1, pages)
}

// codecNames are the names of the codecs of the large-page cases.
var codecNames = map[int32]string{codecZstd: "zstd", codecGzip: "gzip", codecBrotli: "brotli"}

// WriteZeroPages writes at path the file of the large-page cases, for
// benchmarks: a required int32 column z of rowGroups row groups of pages
// pages each, every page 2^28 zeros (1 GiB decompressed) compressed with
// codec ("zstd", "gzip" or "brotli"), in members (frames) of 16 MiB for
// gzip and zstd.
func WriteZeroPages(path, codec string, rowGroups, pages int) error {
	for c, name := range codecNames {
		if name == codec {
			return zeroPages(path, c, 1<<28, rowGroups, pages)
		}
	}
	return fmt.Errorf("no large-page case of codec %q", codec)
}

// zeroPages writes a required int32 column z of rowGroups row groups of
// pages pages of values zeros each, compressed with codec.
func zeroPages(path string, codec int32, values int64, rowGroups, pages int) error {
	z, err := zeroStream(codec, 4*values)
	if err != nil {
		return err
	}
	p, err := newPQ(path)
	if err != nil {
		return err
	}
	rows := int64(pages) * values
	rgs := make([]rowGroup, rowGroups)
	for g := range rgs {
		ch := chunk{typ: typeInt32, path: []string{"z"}, codec: codec, values: rows, uncompSize: rows * 4}
		for i := 0; i < pages; i++ {
			at, size := p.rawPage(pageData, int32(values), encPlain, int32(4*values), z)
			if i == 0 {
				ch.dataOff = at
			}
			ch.size += size
		}
		rgs[g] = rowGroup{rows: rows, chunks: []chunk{ch}}
	}
	return p.finish([]element{group("schema", repRequired, 1), leaf("z", typeInt32, repRequired)}, int64(rowGroups)*rows, rgs)
}

// nullPages: a string column of pages pages of 2^31-1 nulls each (a few
// bytes of definition levels per page): a valid file of 137 billion rows.
func nullPages(dir string, pages int) (Case, error) {
	c := Case{Name: fmt.Sprintf("string-%dx(2^31-1)-nulls", pages), Path: filepath.Join(dir, "nulls.parquet")}
	const values = 1<<31 - 1
	rows := int64(pages) * values
	c.Want = Answer{Rows: rows, Columns: []Column{{Name: "s", NullCount: rows}}}
	p, err := newPQ(c.Path)
	if err != nil {
		return c, err
	}
	el := leaf("s", typeByteArr, repOptional)
	el.conv = convUTF8
	ch := chunk{typ: typeByteArr, path: []string{"s"}, codec: codecNone, values: rows}
	for i := 0; i < pages; i++ {
		at, size := p.page(pageData, values, encPlain, codecNone, levelsV1(values, 0, 1))
		if i == 0 {
			ch.dataOff = at
		}
		ch.size += size
	}
	ch.uncompSize = ch.size
	return c, p.finish([]element{group("schema", repRequired, 1), el}, rows, []rowGroup{{rows: rows, chunks: []chunk{ch}}})
}

// zeroStream is n zero bytes (a multiple of 16 MiB) compressed with codec:
// for gzip and zstd, members (frames) of 16 MiB one after the other, one
// stream to their readers for 1/64 of the compression work a GiB takes;
// brotli has no such members.
func zeroStream(codec int32, n int64) ([]byte, error) {
	const piece = 16 << 20
	if codec != codecGzip && codec != codecZstd {
		return zeros(codec, n)
	}
	m, err := zeros(codec, piece)
	if err != nil {
		return nil, err
	}
	z := make([]byte, 0, int(n/piece)*len(m))
	for i := int64(0); i < n/piece; i++ {
		z = append(z, m...)
	}
	return z, nil
}

// claim: an IPC stream of one int32 batch whose values buffer, a few bytes
// of zstd or lz4 (codec), claims 64 GiB uncompressed in its length prefix;
// read from standard input when stdin is set.
func claim(dir string, codec int, stdin bool) (Case, error) {
	const claimed = 64 << 30
	name := map[int]string{ipcZstd: "zstd", ipcLZ4: "lz4"}[codec]
	c := Case{Name: fmt.Sprintf("ipc-stream-%s-64GiB-claim", name), Path: filepath.Join(dir, "claim-"+name+".arrows"),
		Refuse: strconv.Itoa(claimed), Stdin: stdin}
	if stdin {
		c.Name += "-stdin"
	}
	var comp []byte
	var err error
	if codec == ipcZstd {
		comp, err = zeros(codecZstd, 4096)
	} else {
		comp, err = lz4Zeros(4096)
	}
	if err != nil {
		return c, err
	}
	return c, writeInt32IPC(c.Path, false, claimed/4, codec, claimed, comp)
}

// ipcZeros: an int32 column of 2^30 zeros, 4 GiB, in one record batch
// whose values buffer is zstd frames of 16 MiB of zeros (a few hundred KB
// in all): an IPC file (read in place) when file is set, else an IPC
// stream. The buffer, decompressed, is the array aggregated: more than the
// default memory budget, which refuses it.
func ipcZeros(dir string, file bool) (Case, error) {
	const values = 1 << 30
	c := Case{Name: "ipc-stream-zstd-4GiB-zeros", Path: filepath.Join(dir, "zeros.arrows"), Refuse: "--memory"}
	if file {
		c.Name, c.Path = "ipc-file-zstd-4GiB-zeros", filepath.Join(dir, "zeros.arrow")
	}
	z, err := zeroStream(codecZstd, 4*values)
	if err != nil {
		return c, err
	}
	return c, writeInt32IPC(c.Path, file, values, ipcZstd, 4*values, z)
}

// endlessBody: an IPC stream on standard input of a schema message, then
// the metadata of a record batch that declares a body of 1 TiB, then zero
// bytes for as long as the command reads them: a body buffered as it
// arrives, refused by the memory budget before it is.
func endlessBody(dir string) (Case, error) {
	const body = 1 << 40
	c := Case{Name: "stdin-1TiB-body-endless", Path: filepath.Join(dir, "endless.arrows"),
		Refuse: "--memory", Stdin: true, Endless: true}
	return c, writeBodyHeader(c.Path, body)
}
