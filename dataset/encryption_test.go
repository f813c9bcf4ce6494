package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/budget"
)

var (
	testFooterKey = []byte("0123456789012345")
	testKeyA      = []byte("1234567890123450")
)

// writeEncrypted writes rows of three columns in row groups of 250 rows:
// "c" int32 (-i) plaintext, "a" int64 (i, null where i%7 == 0) encrypted with a key of its own, "b"
// double (i/2) encrypted with the footer key; the footer encrypted or not.
func writeEncrypted(t *testing.T, path string, rows int, plaintextFooter bool) {
	t.Helper()
	mem := memory.DefaultAllocator
	a := array.NewInt64Builder(mem)
	b := array.NewFloat64Builder(mem)
	c := array.NewInt32Builder(mem)
	for i := 0; i < rows; i++ {
		if i%7 == 0 {
			a.AppendNull()
		} else {
			a.Append(int64(i))
		}
		b.Append(float64(i) / 2)
		c.Append(int32(-i))
	}
	// (arrow-go's writer needs the first column's metadata in the footer)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "c", Type: arrow.PrimitiveTypes.Int32},
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	cols := []arrow.Array{c.NewArray(), a.NewArray(), b.NewArray()}
	rec := array.NewRecord(schema, cols, int64(rows))
	defer rec.Release()
	for _, col := range cols {
		col.Release()
	}
	enc := parquet.ColumnPathToEncryptionPropsMap{
		"a": parquet.NewColumnEncryptionProperties("a", parquet.WithKey(string(testKeyA))),
		"b": parquet.NewColumnEncryptionProperties("b"),
	}
	opts := []parquet.EncryptOption{parquet.WithEncryptedColumns(enc)}
	if plaintextFooter {
		opts = append(opts, parquet.WithPlaintextFooter())
	}
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(250),
		parquet.WithEncryptionProperties(parquet.NewFileEncryptionProperties(string(testFooterKey), opts...))),
		pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
}

// aggregateKeys aggregates the file at path with keys, on 4 workers, with
// a checked allocator.
func aggregateKeys(t *testing.T, path string, keys *Keys, opts AggregateOptions) (*Summary, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	d, err := Open(context.Background(), srcs, Options{Mem: mem, Keys: keys, Workers: 4})
	if err != nil {
		return nil, err
	}
	defer d.Close()
	sel, err := d.Select(nil)
	require.NoError(t, err)
	return d.Aggregate(context.Background(), newEngine(t, mem), sel, opts)
}

// Encrypted files, encrypted footer or plaintext one, are read given their
// keys, on several workers, statistics allowed or not: the answers are the
// values written.
func TestEncryptedParquet(t *testing.T) {
	const rows = 1000
	keys := &Keys{Footer: testFooterKey, Columns: map[string][]byte{"a": testKeyA}}
	var sumA, nullA int64
	for i := 0; i < rows; i++ {
		if i%7 == 0 {
			nullA++
		} else {
			sumA += int64(i)
		}
	}
	for _, plaintextFooter := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "enc.parquet")
		writeEncrypted(t, path, rows, plaintextFooter)
		for _, aggs := range []agg.Set{agg.Default, agg.Count | agg.NullCount | agg.Min | agg.Max} {
			sum, err := aggregateKeys(t, path, keys, AggregateOptions{Aggs: aggs})
			require.NoError(t, err, "plaintext footer %v", plaintextFooter)
			require.Len(t, sum.Results, 3)
			c, a, b := sum.Results[0], sum.Results[1], sum.Results[2]
			assert.Equal(t, [2]int64{rows - nullA, nullA}, [2]int64{a.Count, a.NullCount})
			assert.Equal(t, [2]int64{rows, 0}, [2]int64{b.Count, b.NullCount})
			assert.Equal(t, [2]int64{rows, 0}, [2]int64{c.Count, c.NullCount})
			assert.Equal(t, int64(1), a.Min.(*scalar.Int64).Value)
			assert.Equal(t, int64(rows-1), a.Max.(*scalar.Int64).Value)
			assert.Equal(t, float64(rows-1)/2, b.Max.(*scalar.Float64).Value)
			assert.Equal(t, int32(-(rows - 1)), c.Min.(*scalar.Int32).Value)
			if aggs&agg.Sum != 0 {
				assert.Equal(t, sumA, a.Sum.(*scalar.Int64).Value)
				assert.Equal(t, float64(rows*(rows-1)/2)/2, b.Sum.(*scalar.Float64).Value)
			}
		}
	}
}

// Without keys, or with a wrong one, an encrypted file is an error that
// says so and names what is missing or wrong; never corrupt data.
func TestEncryptedParquetKeys(t *testing.T) {
	dir := t.TempDir()
	encFooter, plainFooter := filepath.Join(dir, "enc.parquet"), filepath.Join(dir, "plain-footer.parquet")
	writeEncrypted(t, encFooter, 100, false)
	writeEncrypted(t, plainFooter, 100, true)
	wrong := []byte("0000000000000000")
	cases := []struct {
		name, path string
		keys       *Keys
		is         error
		msg        string
	}{
		{"no keys, encrypted footer", encFooter, nil, ErrMissingKey, "its footer is encrypted, and the footer key is missing (--footer-key)"},
		{"no column key, encrypted footer", encFooter, &Keys{Footer: testFooterKey}, ErrMissingKey, `the keys of its encrypted columns "a" are missing`},
		{"no keys, plaintext footer", plainFooter, nil, ErrMissingKey, `the footer key (--footer-key) and the keys of its encrypted columns "a" are missing`},
		{"column key only, plaintext footer", plainFooter, &Keys{Columns: map[string][]byte{"a": testKeyA}}, ErrMissingKey, "its columns are encrypted with the footer key, which is missing"},
		{"wrong footer key", encFooter, &Keys{Footer: wrong}, ErrWrongKey, "the footer key given does not decrypt the footer (AES-GCM authentication failed)"},
		{"wrong footer key, plaintext footer", plainFooter, &Keys{Footer: wrong, Columns: map[string][]byte{"a": testKeyA}}, ErrWrongKey, "does not verify the plaintext footer's signature"},
		{"wrong column key", encFooter, &Keys{Footer: testFooterKey, Columns: map[string][]byte{"a": wrong}}, ErrWrongKey, `column "a": encrypted Parquet file: the key given does not decrypt the column chunk (AES-GCM authentication failed)`},
		{"AAD prefix the file does not store", encFooter, &Keys{Footer: testFooterKey, AADPrefix: []byte("tester")}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			keys := c.keys
			if c.is == nil {
				keys.Columns = map[string][]byte{"a": testKeyA}
			}
			_, err := aggregateKeys(t, c.path, keys, AggregateOptions{Aggs: agg.Default})
			if c.is == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, c.is)
			assert.ErrorContains(t, err, c.msg)
			assert.ErrorContains(t, err, filepath.Base(c.path))
			var ce *CorruptError
			assert.False(t, errors.As(err, &ce), "%v: not corrupt", err)
		})
	}
}

func TestParseKey(t *testing.T) {
	key := []byte("0123456789012345")
	for _, s := range []string{
		"30313233343536373839303132333435", // hex
		"MDEyMzQ1Njc4OTAxMjM0NQ==",         // base64
		"MDEyMzQ1Njc4OTAxMjM0NQ",           // base64 without padding
		"text:0123456789012345",
		"{0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5}", // as parquet-testing's README writes it
		"{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5}",
	} {
		got, err := ParseKey(s)
		require.NoError(t, err, s)
		assert.Equal(t, key, got, s)
	}
	k32, err := ParseKey("text:01234567890123456789012345678901")
	require.NoError(t, err)
	assert.Len(t, k32, 32)
	for s, msg := range map[string]string{
		"0123456789012345":         "is neither hexadecimal nor base64 of 16, 24 or 32 bytes (an AES key; for a key of text write text:0123456789012345)",
		"3031":                     "is neither hexadecimal nor base64",
		"text:short":               `key "text:short" is 5 bytes; an AES key is 16, 24 or 32`,
		"{0,1,2}":                  "is 3 bytes",
		"{0,12,2,3,4,5,6,7,8,9,0}": `"12" is not one character`,
		"":                         "is neither hexadecimal nor base64",
	} {
		_, err := ParseKey(s)
		assert.ErrorContains(t, err, msg, s)
	}
}

// The encrypted chunks pqarrow decodes are charged to the budget at a bound
// of their pages (read, decrypted and decompressed), as the other chunks it
// decodes are at their largest page: a budget that cannot hold that is
// refused, a larger one answers as with all the memory it wants, and comes
// back whole.
func TestBudgetEncryptedChunks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const rows = 2 << 20 // chunks of "f" of more than 5 MiB
	rec := bigRecord(mem, rows)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "enc.parquet")
	enc := parquet.NewFileEncryptionProperties(string(testFooterKey), parquet.WithEncryptedColumns(parquet.ColumnPathToEncryptionPropsMap{
		"f": parquet.NewColumnEncryptionProperties("f", parquet.WithKey(string(testKeyA)))}))
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(rows / 2), parquet.WithEncryptionProperties(enc)}})
	keys := &Keys{Footer: testFooterKey, Columns: map[string][]byte{"f": testKeyA}}
	want, _ := aggregateFile(t, mem, []string{path}, Options{Keys: keys, Budget: budget.New(1<<40, "")}, agg.Default)

	small := budget.New(24<<20, "--memory")
	_, _, err := aggregatePaths(context.Background(), t, mem, []string{path}, []string{"f"}, Options{Keys: keys, Budget: small})
	var be *budget.Error
	require.ErrorAs(t, err, &be)
	assert.ErrorContains(t, err, "a column chunk decoded")
	assert.ErrorContains(t, err, "the budget is 24.0 MiB (--memory)")
	assert.Zero(t, small.Used())

	b := budget.New(128<<20, "")
	got, _ := aggregateFile(t, mem, []string{path}, Options{Keys: keys, Budget: b, Workers: 4}, agg.Default)
	assert.Equal(t, want, got)
	assert.GreaterOrEqual(t, b.Peak(), int64(arrowTaskBytes+3*(4<<20)), "the encrypted chunk's pages were charged")
	assert.Zero(t, b.Used())
}

// parquet-mr pads the plaintext of its encrypted page headers, which
// arrow-go v17 cannot skip: its AES-256 files and its Bloom filter file are
// read through paddedHeaders, with the answers of the AES-128 files of the
// same data that arrow-go reads as they are. Without the keys nothing is
// translated, and the file is refused naming them. Its plaintext footer's
// signature verifies over the footer's bytes (verifyPlaintextFooter).
func TestPaddedPageHeaders(t *testing.T) {
	key := func(s string) []byte { return []byte(s) }
	aes256 := &Keys{Footer: key("01234567890123456789012345678901"), Columns: map[string][]byte{
		"double_field": key("12345678901234567890123456789012"), "float_field": key("12345678901234567890123456789013"),
		"boolean_field": key("12345678901234567890123456789014"), "int32_field": key("12345678901234567890123456789015"),
		"ba_field": key("12345678901234567890123456789016"), "flba_field": key("12345678901234567890123456789017"),
		"int64_field.list.element": key("12345678901234567890123456789018"), "int96_field": key("12345678901234567890123456789019"),
	}}
	aes128 := &Keys{Footer: key("0123456789012345"), Columns: map[string][]byte{
		"double_field": key("1234567890123450"), "float_field": key("1234567890123451"),
	}}
	cols := []string{"boolean_field", "int32_field", "int64_field", "float_field", "double_field", "ba_field", "flba_field"}
	render := func(sum *Summary) []string {
		out := make([]string, len(sum.Results))
		for i, r := range sum.Results {
			out[i] = fmt.Sprintf("%s %d %d %v %v", r.Name, r.Count, r.NullCount, r.Min, r.Max)
		}
		return out
	}
	// (Not a checked allocator: arrow-go v17's DELTA_BINARY_PACKED decoder,
	// which parquet-mr's int64 lists take, leaks 64 bytes a page.)
	mem := memory.DefaultAllocator
	want, _, err := aggregatePaths(t.Context(), t, mem, []string{parquetTesting(t, "encrypt_columns_and_footer.parquet.encrypted")}, cols, Options{Keys: aes128})
	require.NoError(t, err)
	for _, name := range []string{"encrypt_columns_and_footer", "encrypt_columns_and_footer_ctr", "uniform_encryption", "encrypt_columns_plaintext_footer"} {
		path := parquetTesting(t, "aes256/"+name+".parquet.encrypted")
		got, _, err := aggregatePaths(t.Context(), t, mem, []string{path}, cols, Options{Keys: aes256})
		require.NoError(t, err, name)
		assert.Equal(t, render(want), render(got), name)
		_, _, err = aggregatePaths(t.Context(), t, mem, []string{path}, cols, Options{})
		assert.ErrorIs(t, err, ErrMissingKey, name)
	}
	// The plaintext footer's signature, which parquet-mr made over its own
	// serialization of the footer, verified over the footer's bytes; with
	// another footer key it does not verify.
	wrong := &Keys{Footer: key("01234567890123456789012345678900"), Columns: aes256.Columns}
	_, _, err = aggregatePaths(t.Context(), t, mem, []string{parquetTesting(t, "aes256/encrypt_columns_plaintext_footer.parquet.encrypted")}, cols, Options{Keys: wrong})
	assert.ErrorIs(t, err, ErrWrongKey)
	assert.ErrorContains(t, err, "the footer key given does not verify the plaintext footer's signature")
	got, _, err := aggregatePaths(t.Context(), t, mem, []string{parquetTesting(t, "encrypt_columns_and_footer_bloom_filter.parquet.encrypted")},
		[]string{"double_field", "float_field", "int32_field", "name"}, Options{Keys: aes128})
	require.NoError(t, err)
	assert.Equal(t, []string{"double_field 2000 0 0.5 1999.5", "float_field 2000 0 0.25 1999.25", "int32_field 2000 0 0 1999", "name 2000 0 name_0 name_999"}, render(got))
}
