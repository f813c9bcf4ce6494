package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A mistyped long flag is answered with the closest one.
func TestFlagSuggestion(t *testing.T) {
	pq := testdata + "/sample.parquet"
	for typed, want := range map[string]string{
		"--colums":  "arrowagg: unknown flag: --colums (did you mean --columns?)\n",
		"--fromat":  "arrowagg: unknown flag: --fromat (did you mean --format?)\n",
		"--thread":  "arrowagg: unknown flag: --thread (did you mean --threads?)\n",
		"--memroy":  "arrowagg: unknown flag: --memroy (did you mean --memory?)\n",
		"--zzz":     "arrowagg: unknown flag: --zzz\n",
		"--explian": "arrowagg: unknown flag: --explian (did you mean --explain?)\n",
	} {
		got := runIn(t, context.Background(), env{}, typed, "x", pq)
		assert.Equal(t, exitInput, got.code, typed)
		assert.Equal(t, want, got.stderr, typed)
	}
}

// -a avg is -a mean, as in SQL.
func TestAvgIsMean(t *testing.T) {
	pq := testdata + "/sample.parquet"
	want := runIn(t, context.Background(), env{}, "-f", "json", "-a", "count,mean", pq)
	require.Equal(t, exitOK, want.code, want.stderr)
	got := runIn(t, context.Background(), env{}, "-f", "json", "-a", "count,AVG", pq)
	require.Equal(t, exitOK, got.code, got.stderr)
	assert.Equal(t, want.stdout, got.stdout)
}

// A Parquet file piped into standard input is told to be passed as a path.
func TestParquetOnStdin(t *testing.T) {
	b, err := os.ReadFile(testdata + "/sample.parquet")
	require.NoError(t, err)
	got := runIn(t, context.Background(), env{stdin: bytes.NewReader(b)}, "-")
	assert.Equal(t, exitInput, got.code)
	assert.True(t, strings.HasPrefix(got.stderr, "arrowagg: stdin: reading an Arrow IPC stream: this looks like a Parquet file (it starts with PAR1): pass it as a path"), got.stderr)
}

// --on-error skip leaves out the files that cannot be read, each with a
// note, and counts them; fail (the default) stops at the first.
func TestOnErrorSkip(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(testdata + "/sample.parquet")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dir+"/a.parquet", good, 0o644))
	require.NoError(t, os.WriteFile(dir+"/b.parquet", good[:len(good)/2], 0o644)) // truncated: no footer
	bad := bytes.Clone(good)
	footer := int(binary.LittleEndian.Uint32(good[len(good)-8:]))
	for i := 4; i < len(good)-8-footer; i++ { // every page overwritten, the footer intact: read errors
		bad[i] ^= 0x5a
	}
	require.NoError(t, os.WriteFile(dir+"/c.parquet", bad, 0o644))

	got := runIn(t, context.Background(), env{}, "-c", "i64", dir)
	assert.Equal(t, exitInput, got.code)
	assert.Contains(t, got.stderr, dir+"/b.parquet")

	want := runIn(t, context.Background(), env{}, "-c", "i64", "-f", "json", dir+"/a.parquet")
	require.Equal(t, exitOK, want.code, want.stderr)
	got = runIn(t, context.Background(), env{}, "-c", "i64", "--on-error", "skip", "-f", "json", dir)
	require.Equal(t, exitOK, got.code, got.stderr)
	assert.Regexp(t, `(?s)^arrowagg: note: skipped `+dir+`/b\.parquet: .*\narrowagg: note: skipped `+dir+`/c\.parquet: .*\n$`, got.stderr)
	var res struct {
		Rows    int64
		Files   int
		Skipped []struct{ Path, Error string }
	}
	require.NoError(t, json.Unmarshal([]byte(got.stdout), &res))
	assert.Equal(t, 1, res.Files)
	assert.Len(t, res.Skipped, 2)
	assert.Equal(t, dir+"/c.parquet", res.Skipped[1].Path)
	assert.NotEmpty(t, res.Skipped[1].Error)
	assert.True(t, strings.HasPrefix(got.stdout, strings.TrimSuffix(strings.Split(want.stdout, "\n  ]")[0], "\n")), "the columns are those of the good file:\n%s\n%s", got.stdout, want.stdout)

	got = runIn(t, context.Background(), env{}, "-c", "i64", "--on-error", "skip", dir)
	require.Equal(t, exitOK, got.code, got.stderr)
	assert.Contains(t, got.stdout, "1200 rows, 1 file, 2 skipped\n")
	got = runIn(t, context.Background(), env{}, "--on-error", "skip", dir+"/b.parquet")
	assert.Equal(t, exitInput, got.code)
	assert.Contains(t, got.stderr, "every input was skipped")
	got = runIn(t, context.Background(), env{}, "--on-error", "maybe", dir)
	assert.Equal(t, "arrowagg: --on-error: unknown mode \"maybe\" (want fail or skip)\n", got.stderr)
}

// Bad keys are usage errors that say what is wrong with them.
func TestKeyFlags(t *testing.T) {
	pq := testdata + "/sample.parquet"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--footer-key", "0123456789012345"}, `arrowagg: --footer-key: key "0123456789012345" is neither hexadecimal nor base64 of 16, 24 or 32 bytes (an AES key; for a key of text write text:0123456789012345)` + "\n"},
		{[]string{"--footer-key", "text:abc"}, `arrowagg: --footer-key: key "text:abc" is 3 bytes; an AES key is 16, 24 or 32` + "\n"},
		{[]string{"--column-key", "30313233343536373839303132333435"}, `arrowagg: --column-key "30313233343536373839303132333435": want NAME:KEY` + "\n"},
		{[]string{"--column-key", "x:{1,2}"}, `arrowagg: --column-key x: key "{1,2}" is 2 bytes; an AES key is 16, 24 or 32` + "\n"},
		{[]string{"--column-key", "x:MDEyMzQ1Njc4OTAxMjM0NQ==", "--column-key", "x:text:0123456789012345"}, "arrowagg: --column-key x: given twice\n"},
		{[]string{"--kms-key", "kf"}, `arrowagg: --kms-key "kf": want ID:KEY` + "\n"},
		{[]string{"--kms-key", "kf:text:abc"}, `arrowagg: --kms-key kf: key "text:abc" is 3 bytes; an AES key is 16, 24 or 32` + "\n"},
		{[]string{"--kms-key", "kf:text:0123456789012345", "--kms-key", "kf:text:0123456789012345"}, "arrowagg: --kms-key kf: given twice\n"},
	} {
		got := runIn(t, context.Background(), env{}, append(c.args, pq)...)
		assert.Equal(t, exitInput, got.code, c.args)
		assert.Equal(t, c.want, got.stderr, c.args)
		assert.Empty(t, got.stdout, c.args)
	}
	// Keys given to a plaintext file change nothing.
	want := runIn(t, context.Background(), env{}, "-f", "json", pq)
	got := runIn(t, context.Background(), env{}, "-f", "json", "--footer-key", "text:0123456789012345", "--column-key", "x:text:0123456789012345", pq)
	require.Equal(t, exitOK, got.code, got.stderr)
	assert.Equal(t, want.stdout, got.stdout)
}

// --int96-unit: a unit other than the four is a usage error; the files
// without INT96 columns read the same in every unit, and those with them in
// the unit asked for (the corpus's int96_from_spark.parquet, from its
// conformance rows).
func TestInt96UnitFlag(t *testing.T) {
	pq := testdata + "/sample.parquet"
	got := runIn(t, context.Background(), env{}, "--int96-unit", "µs", pq)
	assert.Equal(t, exitInput, got.code)
	assert.Equal(t, "arrowagg: --int96-unit: INT96 unit \"µs\": want ns, us, ms or s\n", got.stderr)
	want := runIn(t, context.Background(), env{}, "-f", "json", pq)
	for _, u := range []string{"ns", "us", "ms", "s"} {
		got := runIn(t, context.Background(), env{}, "-f", "json", "--int96-unit", u, pq)
		require.Equal(t, exitOK, got.code, got.stderr)
		assert.Equal(t, want.stdout, got.stdout, u)
	}
}

// parquet-testing's uniformly encrypted file: read with its footer key as
// the README writes it, refused without it, and with a wrong one.
func TestEncryptedFile(t *testing.T) {
	pq := corpus + "/parquet-testing/data/uniform_encryption.parquet.encrypted"
	if _, err := os.Stat(pq); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the conformance corpus is missing in CI: %v", err)
		}
		t.Skipf("no conformance corpus at %s", corpus)
	}
	got := runIn(t, context.Background(), env{}, "-f", "csv", "-c", "float_field,double_field", "--footer-key", "{0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5}", pq)
	require.Equal(t, exitOK, got.code, got.stderr)
	assert.Equal(t, "name,type,count,null_count,sum,min,max,mean\n"+
		"float_field,float32,50,0,1347.5000323057175,0.0,53.9,26.95000064611435\n"+
		"double_field,float64,50,0,1361.1110975000001,0.0,54.4444439,27.22222195\n", got.stdout)

	// Its INT96 column (Julian days 2 and up) is checked as plaintext ones
	// are, not wrapped around by pqarrow.
	got = runIn(t, context.Background(), env{}, "-c", "int96_field", "--footer-key", "text:0123456789012345", pq)
	assert.Equal(t, exitInput, got.code)
	assert.Contains(t, got.stderr, `column "int96_field": INT96 timestamp -4713-11-26T00:00:04.294967296Z does not fit timestamp[ns]`)

	got = runIn(t, context.Background(), env{}, "-c", "float_field", pq)
	assert.Equal(t, exitInput, got.code)
	assert.Equal(t, "arrowagg: "+pq+": encrypted Parquet file: its footer is encrypted, and the footer key is missing (--footer-key)\n", got.stderr)

	got = runIn(t, context.Background(), env{}, "-c", "float_field", "--footer-key", "text:0123456789012346", pq)
	assert.Equal(t, exitInput, got.code)
	assert.Equal(t, "arrowagg: "+pq+": encrypted Parquet file: the footer key given does not decrypt the footer (AES-GCM authentication failed): a wrong footer key, or an altered footer\n", got.stderr)
}
