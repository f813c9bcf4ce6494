package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// corpus is where the Arrow and Parquet projects' conformance files lie,
// beside the repository (CI has them there).
const corpus = "../../../shared/corpus"

// TestIPCFilesAnswerAsTheirStreams: every file of arrow-testing's
// integration folders (little- and big-endian, written by Arrow C++, Java,
// Go, Rust, ... of many versions) gives the same answer and exit status as
// the stream twin beside it: IPC files are read in place from their footer,
// streams through Arrow's reader, so the two readers are checked against each
// other on files that other writers made (byte order, null columns, dictionary
// deltas, decimals, ...).
func TestIPCFilesAnswerAsTheirStreams(t *testing.T) {
	root := filepath.Join(corpus, "arrow-testing", "data", "arrow-ipc-stream", "integration")
	if _, err := os.Stat(root); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the conformance corpus is missing in CI: %v", err)
		}
		t.Skipf("no conformance corpus at %s", root)
	}
	files, err := filepath.Glob(filepath.Join(root, "*", "*.arrow_file"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	pairs := 0
	legacy := 0 // pre-1.0 streams (0.14.1), without the continuation marker
	for _, f := range files {
		if filepath.Base(filepath.Dir(f)) == "0.14.1" {
			legacy++
		}
		stream := strings.TrimSuffix(f, ".arrow_file") + ".stream"
		if _, err := os.Stat(stream); err != nil {
			continue
		}
		pairs++
		name, _ := filepath.Rel(root, f)
		for _, aggs := range []string{"count,null_count,sum,min,max,mean", "first,last,arg_min,arg_max"} {
			file := runIn(t, context.Background(), env{}, "--format", "json", "--device", "cpu", "-a", aggs, f)
			strm := runIn(t, context.Background(), env{}, "--format", "json", "--device", "cpu", "-a", aggs, stream)
			assert.Equal(t, strm.code, file.code, "%s: exit status (file: %s; stream: %s)", name, file.stderr, strm.stderr)
			assert.Equal(t, strm.stdout, file.stdout, "%s -a %s", name, aggs)
		}
	}
	require.Greater(t, pairs, 70)
	require.Equal(t, 9, legacy, "the pre-1.0 streams were checked")
}

// TestCorpusEndsCleanly: every file of both conformance corpora (valid,
// corrupt, fuzzed and encrypted ones) ends with an answer or an input error
// (exit 0 or 2), never an internal error or a crash. It runs with Go's
// allocator, not runIn's checked one: arrow-go v17's DELTA_BINARY_PACKED
// decoder never releases its miniblock widths buffer (64 bytes a decoder,
// garbage-collected with Go's allocator), which parquet-testing's delta files
// show.
func TestCorpusEndsCleanly(t *testing.T) {
	if _, err := os.Stat(corpus); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the conformance corpus is missing in CI: %v", err)
		}
		t.Skipf("no conformance corpus at %s", corpus)
	}
	n := 0
	err := filepath.WalkDir(corpus, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".md", ".txt", ".csv", ".py", ".yaml", ".gz", ".json", ".sh", ".gitignore", "":
			if !strings.Contains(path, "fuzz") && !strings.Contains(path, "bad_data") {
				return nil
			}
		}
		n++
		name, _ := filepath.Rel(corpus, path)
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"--format", "json", "--device", "cpu", "--threads", "4", path},
				env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, mem: memory.NewGoAllocator()})
			got := invocation{code, stdout.String(), stderr.String()}
			assert.Contains(t, []int{0, 2}, got.code, "%s: %s", path, got.stderr)
			assert.NotContains(t, got.stderr, "goroutine ", path)
			if got.code != 0 {
				return
			}
			// No silent drops: every column --schema lists is aggregated
			// or named in a note with its reason.
			var res struct{ Columns []struct{ Name string } }
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
			var sch struct {
				Columns []struct {
					Name       string
					Aggregated bool
					Reason     *string
				}
			}
			stdout.Reset()
			stderr.Reset()
			code = run(context.Background(), []string{"--format", "json", "--schema", path},
				env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, mem: memory.NewGoAllocator()})
			require.Equal(t, 0, code, stderr.String())
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &sch))
			notes := strings.Count(got.stderr, "arrowagg: note: skipping column ")
			agg, elems := 0, 0
			for _, c := range sch.Columns {
				switch {
				case c.Aggregated:
					agg++
				case c.Reason != nil && *c.Reason == elementReason: // elements, of a list that is aggregated
					elems++
				}
			}
			assert.Equal(t, agg, len(res.Columns), "%s: the aggregated columns", path)
			assert.Equal(t, len(sch.Columns)-agg-elems, notes, "%s: a note for each column left out:\n%s", path, got.stderr)
		})
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, n, 300)
}
