package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/spf13/pflag"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/budget"
	"github.com/arrowagg/arrowagg/dataset"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/bytesize"
	"github.com/arrowagg/arrowagg/internal/startup"
	"github.com/arrowagg/arrowagg/report"
)

// Exit statuses.
const (
	exitOK          = 0
	exitInternal    = 1
	exitInput       = 2 // bad usage or bad input
	exitInterrupted = 130
)

// version is set at link time: -ldflags "-X main.version=v1.2.3".
var version = ""

// env is what run reads and writes besides its arguments.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	stdinTerminal  bool
	stderrTerminal bool
	mem            memory.Allocator
}

// usageError is a problem with the command line (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// options are the parsed flags.
type options struct {
	columns  []string
	aggs     agg.Set
	format   report.Format
	device   engine.Device
	explain  bool
	schema   bool
	skipBad  bool // --on-error skip
	noStats  bool
	threads  int
	progress string
	paths    []string

	gpuMemory int64  // cap on the GPU backend's device memory, bytes (0: none)
	memory    int64  // the memory budget of reading the inputs, bytes
	spillDir  string // where groups spill past --memory ("": they do not)

	keys *dataset.Keys // of encrypted Parquet files (--footer-key, --column-key, --aad-prefix); nil: none

	int96 dataset.Int96Unit // the unit INT96 timestamps are read in (--int96-unit)

	groupBy []string // --group-by: key columns
	where   string   // --where: the filter's predicate
	output  string   // -o: the file the groups are written to
}

const usageHead = `Usage: arrowagg [flags] PATH...

Aggregates the columns of Parquet files, Arrow IPC files and Arrow IPC
streams: count, null_count, sum, min, max and mean, on the CPU or a GPU.

PATH is a file, a directory (every Parquet or Arrow IPC file directly in it),
a glob, or - for an Arrow IPC stream on standard input; formats are detected
from the bytes. Several inputs are one dataset: columns are matched by name,
and a column missing from a file is null there.

Flags:
`

const usageTail = `
Exit status: 0 success, 1 internal error, 2 bad usage or bad input,
130 interrupted.
`

// suggestFlag adds to the error of an unknown long flag the closest flag
// there is, when one is close (--colums: did you mean --columns?).
func suggestFlag(fs *pflag.FlagSet, err error) error {
	const prefix = "unknown flag: --"
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return err
	}
	typed := strings.TrimPrefix(msg, prefix)
	best, bestDist := "", 3 // at most 2 edits, and under a third of the name
	fs.VisitAll(func(f *pflag.Flag) {
		if d := editDistance(typed, f.Name); d < bestDist && 3*d < len(f.Name) {
			best, bestDist = f.Name, d
		}
	})
	if best == "" {
		return err
	}
	return fmt.Errorf("%w (did you mean --%s?)", err, best)
}

// editDistance is the edit distance of a and b: insertions, deletions,
// substitutions and transpositions of two neighbours (--memroy is one edit
// from --memory).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// parseFlags parses args; done is set when --help or --version was handled.
func parseFlags(args []string, stdout io.Writer) (opts options, done bool, err error) {
	fs := pflag.NewFlagSet("arrowagg", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	columns := fs.StringSliceP("columns", "c", nil, "columns to aggregate, comma-separated; dotted names for struct fields (default: every supported column)")
	aggs := fs.StringP("aggs", "a", "count,null_count,sum,min,max,mean", "aggregates, comma-separated; also stddev,variance,approx_distinct and first,last,arg_min,arg_max (row order)")
	format := fs.StringP("format", "f", "table", "output format: table, json or csv")
	device := fs.String("device", "auto", "where to aggregate: auto, cpu or gpu")
	gpuMemory := fs.String("gpu-memory", "", "cap on the GPU backend's device memory, a `SIZE` such as 8GiB, 512MiB or a number of bytes: larger columns stream through the GPU in parts (default, or 0: no cap; no effect on the CPU backend)")
	memSize := fs.String("memory", "", fmt.Sprintf("memory budget for what the inputs make arrowagg allocate (decompressed pages and buffers, dictionaries, footers), a `SIZE`: work waits for memory, and an input that needs more is refused with exit status 2; with --group-by also the most the groups hold, past which they spill to --spill-dir (default: a quarter of the machine's memory, at most %s; here %s)", bytesize.Format(budget.DefaultMax), bytesize.Format(budget.DefaultBytes())))
	spillDir := fs.String("spill-dir", os.TempDir(), "with --group-by: the `DIR` where the groups spill when they outgrow --memory (their files are removed as they are made, and gone when the run ends); none: stop with an error instead")
	schema := fs.Bool("schema", false, "print the columns (name, type, nullable, whether they are aggregated and why not) and the row count instead of aggregating, in --format")
	onError := fs.String("on-error", "fail", "what an input that cannot be read does: fail (stop with its error) or skip (leave it out with a note on stderr; the output counts the files skipped)")
	explain := fs.Bool("explain", false, "print the plan on stderr: per column the backend, the bytes it read and why")
	noStats := fs.Bool("no-stats", false, "read every Parquet column chunk, even those whose row-group statistics answer count, null_count, min and max")
	footerKey := fs.String("footer-key", "", "the footer `KEY` of encrypted Parquet files (also the key of the columns encrypted with it): hexadecimal, base64, text:CHARACTERS, or {c,c,...} as parquet-testing writes keys")
	columnKeys := fs.StringArray("column-key", nil, "the key of an encrypted Parquet column, `NAME:KEY` (NAME its dotted path in the Parquet schema, KEY as --footer-key's); repeat for each column")
	kmsKeys := fs.StringArray("kms-key", nil, "a master key of the key management service that wraps the keys of encrypted Parquet files (Parquet key material, in the footer or in _KEY_MATERIAL_FOR_<file>.json beside it), `ID:KEY` (KEY as --footer-key's); repeat for each")
	aadPrefix := fs.String("aad-prefix", "", "the AAD prefix of encrypted Parquet files whose writer did not store it, as `TEXT`")
	int96 := fs.String("int96-unit", "ns", "the unit Parquet INT96 timestamps are read in: ns (1677 to 2262; later or earlier instants are an error), us (Spark's, to year 294247), ms or s")
	groupBy := fs.StringSlice("group-by", nil, "key `COLUMNS`, comma-separated: print the aggregates of each group of rows of equal keys (SQL's GROUP BY; a null key is a group), sorted by key, with count_all, the rows of each group")
	where := fs.String("where", "", "aggregate only the rows for which the predicate `EXPR` holds (SQL's WHERE): comparisons of columns with literals (= != < <= > >=), IN (...), IS [NOT] NULL, AND, OR, NOT and parentheses; strings in quotes, e.g. 'price > 10 and region in (\"EU\", \"US\")'")
	output := fs.StringP("output", "o", "", "with --group-by: write the groups to `FILE` instead, as Parquet (FILE.parquet) or an Arrow IPC file (FILE.arrow, .feather, .ipc), for results too large to print")
	threads := fs.Int("threads", 0, "CPU threads for decoding and aggregating (default: every CPU)")
	progress := fs.String("progress", "auto", "progress bar on stderr: auto (a terminal and over 64 MiB of input), always or never")
	showVersion := fs.BoolP("version", "V", false, "print the version and exit")
	help := fs.BoolP("help", "h", false, "print this help and exit")

	if err := fs.Parse(args); err != nil {
		return opts, false, usageError{suggestFlag(fs, err)}
	}
	if *help {
		fmt.Fprint(stdout, usageHead+fs.FlagUsages()+usageTail)
		return opts, true, nil
	}
	if *showVersion {
		fmt.Fprintln(stdout, versionString())
		return opts, true, nil
	}
	if opts.aggs, err = agg.Parse(*aggs); err != nil {
		return opts, false, usagef("--aggs: %w", err)
	}
	if opts.format, err = report.ParseFormat(*format); err != nil {
		return opts, false, usagef("--format: %w", err)
	}
	if opts.device, err = engine.ParseDevice(*device); err != nil {
		return opts, false, usagef("--device: %w", err)
	}
	switch *progress {
	case "auto", "always", "never":
	default:
		return opts, false, usagef("--progress: unknown mode %q (want auto, always or never)", *progress)
	}
	if *gpuMemory != "" {
		if opts.gpuMemory, err = bytesize.Parse(*gpuMemory); err != nil {
			return opts, false, usagef("--gpu-memory: %w", err)
		}
	}
	opts.schema = *schema
	switch *onError {
	case "fail":
	case "skip":
		opts.skipBad = true
	default:
		return opts, false, usagef("--on-error: unknown mode %q (want fail or skip)", *onError)
	}
	opts.memory = budget.DefaultBytes()
	if *memSize != "" {
		if opts.memory, err = bytesize.Parse(*memSize); err != nil {
			return opts, false, usagef("--memory: %w", err)
		}
		if opts.memory <= 0 {
			return opts, false, usagef("--memory: the budget must be more than 0 bytes")
		}
	}
	if opts.spillDir = *spillDir; opts.spillDir == "none" {
		opts.spillDir = ""
	} else if fs.Changed("spill-dir") {
		// A directory named on the command line is checked now, not
		// when the groups first spill, minutes into the run.
		if st, err := os.Stat(opts.spillDir); err != nil || !st.IsDir() {
			return opts, false, usagef("--spill-dir: %q is not a directory", opts.spillDir)
		}
	}
	if *threads < 0 {
		return opts, false, usagef("--threads: %d is negative", *threads)
	}
	for _, c := range *columns {
		c = strings.TrimSpace(c)
		if c == "" {
			return opts, false, usagef("--columns: empty column name")
		}
		opts.columns = append(opts.columns, c)
	}
	if opts.keys, err = parseKeys(*footerKey, *columnKeys, *kmsKeys, *aadPrefix); err != nil {
		return opts, false, err
	}
	if opts.int96, err = dataset.ParseInt96Unit(*int96); err != nil {
		return opts, false, usagef("--int96-unit: %w", err)
	}
	opts.explain, opts.threads, opts.progress, opts.paths = *explain, *threads, *progress, fs.Args()
	opts.noStats = *noStats
	for _, k := range *groupBy {
		k = strings.TrimSpace(k)
		if k == "" {
			return opts, false, usagef("--group-by: empty column name")
		}
		opts.groupBy = append(opts.groupBy, k)
	}
	opts.where = *where
	opts.output = *output
	if opts.output != "" {
		if len(opts.groupBy) == 0 {
			return opts, false, usagef("--output: only with --group-by")
		}
		if _, err := outputFormat(opts.output); err != nil {
			return opts, false, usagef("--output: %w", err)
		}
	}
	if len(opts.paths) == 0 {
		return opts, false, usagef("no input: name files, directories, globs or - (stdin); see arrowagg --help")
	}
	return opts, false, nil
}

// parseKeys reads the keys of --footer-key, --column-key, --kms-key and
// --aad-prefix; nil when none is given.
func parseKeys(footer string, columns, kms []string, aad string) (*dataset.Keys, error) {
	if footer == "" && len(columns) == 0 && len(kms) == 0 && aad == "" {
		return nil, nil
	}
	keys := &dataset.Keys{AADPrefix: []byte(aad)}
	var err error
	if footer != "" {
		if keys.Footer, err = dataset.ParseKey(footer); err != nil {
			return nil, usagef("--footer-key: %w", err)
		}
	}
	for _, c := range columns {
		name, key, ok := strings.Cut(c, ":")
		if !ok || name == "" {
			return nil, usagef("--column-key %q: want NAME:KEY", c)
		}
		k, err := dataset.ParseKey(key)
		if err != nil {
			return nil, usagef("--column-key %s: %w", name, err)
		}
		if keys.Columns == nil {
			keys.Columns = map[string][]byte{}
		}
		if _, dup := keys.Columns[name]; dup {
			return nil, usagef("--column-key %s: given twice", name)
		}
		keys.Columns[name] = k
	}
	for _, m := range kms {
		id, key, ok := strings.Cut(m, ":")
		if !ok || id == "" {
			return nil, usagef("--kms-key %q: want ID:KEY", m)
		}
		k, err := dataset.ParseKey(key)
		if err != nil {
			return nil, usagef("--kms-key %s: %w", id, err)
		}
		if keys.KMS == nil {
			keys.KMS = map[string][]byte{}
		}
		if _, dup := keys.KMS[id]; dup {
			return nil, usagef("--kms-key %s: given twice", id)
		}
		keys.KMS[id] = k
	}
	return keys, nil
}

func versionString() string {
	v := version
	if v == "" {
		v = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok {
			if bi.Main.Version != "" {
				v = bi.Main.Version
			}
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					v += " " + s.Value
				}
			}
		}
	}
	build := "CPU backend only"
	if backend.GPUBuiltIn() {
		build = "with the CUDA backend"
	}
	return fmt.Sprintf("arrowagg %s (%s, %s/%s, %s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH, build)
}

// run is the whole command; it returns the exit status.
func run(ctx context.Context, args []string, e env) int {
	err := execute(ctx, args, e)
	if err == nil {
		return exitOK
	}
	code := exitCode(ctx, err)
	msg := err.Error()
	if code == exitInterrupted {
		msg = "interrupted"
	}
	// One line, whatever the libraries below put in their messages.
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
	fmt.Fprintf(e.stderr, "arrowagg: %s\n", msg)
	return code
}

func exitCode(ctx context.Context, err error) int {
	var ue usageError
	var de *dataset.Error
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case errors.As(err, &ue), errors.As(err, &de),
		errors.Is(err, engine.ErrUnknownColumn), errors.Is(err, backend.ErrNoGPU), errors.Is(err, dataset.ErrAllSkipped):
		return exitInput
	}
	return exitInternal
}

func execute(ctx context.Context, args []string, e env) error {
	opts, done, err := parseFlags(args, e.stdout)
	if err != nil || done {
		return err
	}
	if opts.threads > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(opts.threads))
	}
	eng, err := newEngine(opts, e.mem)
	if err != nil {
		return err
	}
	defer eng.Close()

	var sources []dataset.Source
	var skipped []dataset.Skipped // (--on-error skip)
	if opts.skipBad {
		sources, skipped, err = dataset.ExpandSkipping(opts.paths)
		for _, sk := range skipped {
			fmt.Fprintf(e.stderr, "arrowagg: note: skipped %s: %v\n", sk.Path, sk.Err)
		}
		if err == nil && len(sources) == 0 {
			err = dataset.ErrAllSkipped
		}
	} else {
		sources, err = dataset.Expand(opts.paths)
	}
	if err != nil {
		return err
	}
	var total int64
	for _, s := range sources {
		if s.Path == dataset.Stdin {
			if e.stdinTerminal {
				return &dataset.Error{Path: "stdin", Err: errors.New("is a terminal; pipe an Arrow IPC stream into it")}
			}
			total = -1
		} else if total >= 0 {
			total += s.Size
		}
	}

	bar := newProgress(opts.progress, e.stderr, e.stderrTerminal, total)
	defer bar.stop(false)
	mem := budget.New(opts.memory, "--memory")
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		// The Go heap is collected harder as it nears the budget and the
		// constant a run holds besides (budget's doc): garbage does not
		// pile up on top of the budget.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(opts.memory + memoryOverhead))
	}
	ds, err := dataset.Open(ctx, sources, dataset.Options{Mem: e.mem, Stdin: e.stdin, Progress: bar.add, Workers: opts.threads, Budget: mem, SkipBad: opts.skipBad, Keys: opts.keys, Int96: opts.int96})
	if err != nil {
		return err
	}
	defer ds.Close()
	for _, sk := range ds.Skipped {
		bar.note(func(w io.Writer) { fmt.Fprintf(w, "arrowagg: note: skipped %s: %v\n", sk.Path, sk.Err) })
	}
	skipped = append(skipped, ds.Skipped...)
	if opts.schema {
		return writeSchema(ctx, e, opts, ds, eng, len(sources), bar)
	}
	if len(opts.groupBy) > 0 || opts.where != "" {
		return writeGroups(ctx, e, opts, ds, eng, bar, skipped)
	}
	sel, err := ds.SelectContext(ctx, opts.columns)
	if err != nil {
		return err
	}
	for _, l := range sel.Skipped {
		bar.note(func(w io.Writer) { fmt.Fprintf(w, "arrowagg: note: skipping %v\n", l.Err) })
	}
	for _, l := range sel.Leaves {
		if l.Occurrence > 0 { // its name an earlier column of its schema has: the name it goes by
			bar.note(func(w io.Writer) {
				fmt.Fprintf(w, "arrowagg: note: %s (%s) is reported as %q (select it with -c %s)\n", l.Renamed(), l.Type, l.Name, l.Name)
			})
		}
	}
	sum, err := ds.Aggregate(ctx, eng, sel, dataset.AggregateOptions{Aggs: opts.aggs, IgnoreStatistics: opts.noStats})
	if err != nil {
		return err
	}
	bar.stop(true)
	if opts.explain {
		if err := writePlan(e.stderr, opts, eng, sources, sel, sum); err != nil {
			return err
		}
	}
	for _, sk := range sum.Skipped {
		bar.note(func(w io.Writer) { fmt.Fprintf(w, "arrowagg: note: skipped %s: %v\n", sk.Path, sk.Err) })
	}
	skipped = append(skipped, sum.Skipped...)
	r := report.Report{Rows: sum.Rows, Files: sum.Files, Aggs: opts.aggs, Columns: sum.Results}
	if opts.skipBad {
		r.Skipped = make([]report.Skipped, len(skipped))
		for i, sk := range skipped {
			r.Skipped[i] = report.Skipped{Path: sk.Path, Error: sk.Err.Error()}
		}
	}
	if opts.explain && opts.format == report.JSON {
		r.Plan = sum.Plan
	}
	defer startup.Trace("result written", time.Now(), nil)
	if err := report.Write(e.stdout, opts.format, r); err != nil {
		return fmt.Errorf("writing the %s output: %w", opts.format, err)
	}
	return nil
}

// elementReason is the --schema reason of the element columns of lists and
// maps, aggregated only when named.
const elementReason = "an element column: aggregated when named with -c"

// writeSchema prints the columns of the n sources of ds (partition keys
// included), in order of first appearance, and their rows (--schema).
func writeSchema(ctx context.Context, e env, opts options, ds *dataset.Dataset, eng *engine.Engine, n int, bar *progress) error {
	var out report.Schema
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		schema := ds.Schema(i)
		leaves := ds.SchemaLeaves(i)
		earlier := len(seen) > 0 // names of earlier sources are listed once
		for _, l := range leaves {
			if earlier && seen[l.Name] {
				continue
			}
			c := report.SchemaColumn{Name: l.Name, Type: l.Type.String(), Nullable: l.Path == nil} // (a partition key may be null)
			fields := schema.Fields()
			inList := false
			for _, k := range l.Path {
				if inList { // the elements of a list or a map: their nulls are their own
					c.Nullable, inList = false, false
				}
				f := fields[k]
				c.Nullable = c.Nullable || f.Nullable
				switch t := f.Type.(type) {
				case *arrow.StructType:
					fields = t.Fields()
				case arrow.NestedType:
					fields, inList = t.Fields(), true
				}
			}
			switch {
			case l.Err != nil:
				c.Reason = l.Err.Error()
			case l.Repeated > 0:
				c.Reason = elementReason
			}
			out.Columns = append(out.Columns, c)
		}
		for _, l := range leaves {
			seen[l.Name] = true
		}
	}
	// The rows: the footers answer Parquet and IPC files; streams are read.
	sum, err := ds.Aggregate(ctx, eng, dataset.Selection{}, dataset.AggregateOptions{})
	if err != nil {
		return err
	}
	bar.stop(true)
	out.Rows, out.Files = sum.Rows, sum.Files
	return report.WriteSchema(e.stdout, opts.format, out)
}

// memoryOverhead is what a run holds besides its memory budget: the Go
// runtime, the engine, the buffers each worker keeps (at most 4 MiB each,
// a few per worker), results.
const memoryOverhead = 256 << 20

// newEngine makes the engine of the device policy: DeviceGPU without a GPU
// backend is an error wrapping backend.ErrNoGPU.
func newEngine(opts options, mem memory.Allocator) (*engine.Engine, error) {
	eo := []engine.Option{engine.WithDevice(opts.device), engine.WithAllocator(mem)}
	if opts.threads > 0 {
		eo = append(eo, engine.WithThreads(opts.threads))
	}
	if opts.gpuMemory > 0 {
		eo = append(eo, engine.WithGPUMemoryLimit(opts.gpuMemory))
	}
	eng, err := engine.New(eo...)
	if err != nil {
		return nil, fmt.Errorf("--device %s: %w", opts.device, err)
	}
	return eng, nil
}
