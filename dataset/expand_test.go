package dataset

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata is the repository's testdata directory.
var testdata = filepath.Join("..", "testdata")

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dst, b, 0o644))
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

func paths(srcs []Source) []string {
	out := make([]string, len(srcs))
	for i, s := range srcs {
		out[i] = s.Path
	}
	return out
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	pq := filepath.Join(testdata, "sample.parquet")
	// a directory of data files, text files, hidden and underscore files, a
	// subdirectory and a FIFO (none of which are read)
	data := filepath.Join(dir, "data")
	require.NoError(t, os.MkdirAll(filepath.Join(data, "sub"), 0o755))
	copyFile(t, pq, filepath.Join(data, "b.bin"))
	copyFile(t, filepath.Join(testdata, "sample.arrows"), filepath.Join(data, "a.stream"))
	copyFile(t, pq, filepath.Join(data, ".hidden.parquet"))
	copyFile(t, pq, filepath.Join(data, "_metadata"))
	copyFile(t, pq, filepath.Join(data, "sub", "c.parquet"))
	writeFile(t, filepath.Join(data, "README.txt"), []byte("not data\n"))
	writeFile(t, filepath.Join(data, "empty"), nil)
	require.NoError(t, syscall.Mkfifo(filepath.Join(data, "fifo"), 0o644))

	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.MkdirAll(empty, 0o755))
	textOnly := filepath.Join(dir, "text")
	writeFile(t, filepath.Join(textOnly, "a.csv"), []byte("a,b\n1,2\n"))
	broken := filepath.Join(dir, "broken")
	b, err := os.ReadFile(pq)
	require.NoError(t, err)
	writeFile(t, filepath.Join(broken, "part.parquet"), b[:len(b)/2])
	writeFile(t, filepath.Join(dir, "notes.txt"), []byte("hello\n"))
	writeFile(t, filepath.Join(dir, "zero.parquet"), nil)
	fifo := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	cases := []struct {
		name    string
		in      []string
		want    []string
		formats []Format
		wantErr string // the whole message
	}{
		{name: "file", in: []string{pq}, want: []string{pq}, formats: []Format{Parquet}},
		{name: "directory", in: []string{data},
			want:    []string{filepath.Join(data, "a.stream"), filepath.Join(data, "b.bin")},
			formats: []Format{IPCStream, Parquet}},
		{name: "glob", in: []string{filepath.Join(testdata, "sample.*")},
			want: []string{filepath.Join(testdata, "sample.arrow"), filepath.Join(testdata, "sample.arrows"), filepath.Join(testdata, "sample.parquet")}},
		{name: "duplicates", in: []string{pq, filepath.Join(testdata, ".", "sample.parquet"), filepath.Join(testdata, "sample.p*")}, want: []string{pq}},
		{name: "stdin", in: []string{"-", pq}, want: []string{"-", pq}, formats: []Format{IPCStream, Parquet}},
		{name: "nothing", in: nil, wantErr: "no input: name files, directories, globs or - (stdin)"},
		{name: "stdin twice", in: []string{"-", "-"}, wantErr: "stdin: named more than once"},
		{name: "missing", in: []string{filepath.Join(dir, "nope.parquet")}, wantErr: filepath.Join(dir, "nope.parquet") + ": no such file or directory"},
		{name: "glob without match", in: []string{filepath.Join(dir, "*.arrow")}, wantErr: filepath.Join(dir, "*.arrow") + ": no file matches the pattern"},
		{name: "bad glob", in: []string{filepath.Join(dir, "[x")}, wantErr: filepath.Join(dir, "[x") + ": bad glob pattern: syntax error in pattern"},
		{name: "empty directory", in: []string{empty}, wantErr: empty + ": no Parquet or Arrow IPC files in this directory"},
		{name: "directory without data", in: []string{textOnly}, wantErr: textOnly + ": no Parquet or Arrow IPC files in this directory"},
		{name: "directory with a broken file", in: []string{broken}, wantErr: filepath.Join(broken, "part.parquet") + ": truncated or corrupt Parquet file: no PAR1 magic at the end"},
		{name: "wrong magic", in: []string{filepath.Join(dir, "notes.txt")}, wantErr: filepath.Join(dir, "notes.txt") + ": not a Parquet file, Arrow IPC file or Arrow IPC stream"},
		{name: "empty file", in: []string{filepath.Join(dir, "zero.parquet")}, wantErr: filepath.Join(dir, "zero.parquet") + ": empty file"},
		{name: "fifo", in: []string{fifo}, wantErr: fifo + ": not a regular file (read an Arrow IPC stream from a pipe with -)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Expand(c.in)
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, c.wantErr, err.Error())
				if len(c.in) > 0 {
					var e *Error
					assert.ErrorAs(t, err, &e, "an input error names the input")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, paths(got))
			for i, f := range c.formats {
				assert.Equal(t, f, got[i].Format, got[i].Path)
			}
			for _, s := range got {
				if s.Path == Stdin {
					assert.Equal(t, int64(-1), s.Size)
					assert.Equal(t, "stdin", s.Name())
					continue
				}
				fi, err := os.Stat(s.Path)
				require.NoError(t, err)
				assert.Equal(t, fi.Size(), s.Size)
			}
		})
	}
}

// ExpandSkipping leaves out, and lists, the files that cannot be read;
// Open and Aggregate with SkipBad leave out those that fail later.
func TestSkipBad(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join(testdata, "sample.parquet"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.parquet"), good, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.parquet"), good[:100], 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.arrow"), []byte("ARROW1\x00\x00garbage that is no IPC file at all ARROW1"), 0o644))
	srcs, skipped, err := ExpandSkipping([]string{dir})
	require.NoError(t, err)
	require.Len(t, srcs, 2)
	require.Len(t, skipped, 1)
	assert.Equal(t, filepath.Join(dir, "b.parquet"), skipped[0].Path)
	_, err = Expand([]string{dir})
	assert.ErrorContains(t, err, "b.parquet")

	_, err = Open(context.Background(), srcs, Options{})
	assert.Error(t, err, "c.arrow's schema cannot be read")
	d, err := Open(context.Background(), srcs, Options{SkipBad: true})
	require.NoError(t, err)
	defer d.Close()
	require.Len(t, d.Skipped, 1)
	assert.Equal(t, filepath.Join(dir, "c.arrow"), d.Skipped[0].Path)

	_, err = Open(context.Background(), srcs[1:], Options{SkipBad: true})
	assert.ErrorIs(t, err, ErrAllSkipped)
	assert.ErrorContains(t, err, "c.arrow: ")
}
