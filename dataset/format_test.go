package dataset

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func TestDetect(t *testing.T) {
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	pad := make([]byte, 64)
	cases := []struct {
		name    string
		data    []byte
		want    Format
		wantErr string
	}{
		{"empty", nil, Unknown, "empty file"},
		{"parquet", cat([]byte("PAR1"), pad, []byte("PAR1")), Parquet, ""},
		{"parquet without its footer magic", cat([]byte("PAR1"), pad), Unknown, "no PAR1 magic at the end"},
		{"parquet too short", []byte("PAR1xPAR1"), Unknown, "truncated Parquet file (9 bytes)"},
		{"parquet starting plaintext, ending encrypted", cat([]byte("PAR1"), pad, []byte("PARE")), Unknown, "corrupt Parquet file: PAR1 at the start, PARE (an encrypted footer) at the end"},
		{"encrypted parquet (encrypted footer)", cat([]byte("PARE"), pad, []byte("PARE")), Parquet, ""},
		{"encrypted parquet without its footer magic", cat([]byte("PARE"), pad), Unknown, "no PARE magic at the end"},
		{"encrypted parquet too short", []byte("PARExPARE"), Unknown, "truncated Parquet file (9 bytes)"},
		{"ipc file", cat([]byte("ARROW1\x00\x00"), pad, []byte("ARROW1")), IPCFile, ""},
		{"ipc file without its footer magic", cat([]byte("ARROW1\x00\x00"), pad), Unknown, "no ARROW1 magic at the end"},
		{"ipc file too short", []byte("ARROW1\x00\x00ARROW1"), Unknown, "no ARROW1 magic"},
		{"stream", cat(le32(continuation), le32(16), pad), IPCStream, ""},
		{"stream that ends at once", cat(le32(continuation), le32(0)), Unknown, "without a schema"},
		{"stream with a negative length", cat(le32(continuation), le32(0x80000000), pad), Unknown, "message length -2147483648"},
		{"truncated stream", cat(le32(continuation), le32(200), pad), Unknown, "truncated Arrow IPC stream"},
		{"legacy stream", cat(le32(16), le32(12), pad), IPCStream, ""},
		{"legacy length too long", cat(le32(1024), le32(12), pad), Unknown, "not a Parquet file"},
		{"legacy stream of 0.14 (4+n aligned)", cat(le32(20), le32(12), pad), IPCStream, ""},
		{"legacy length unaligned", cat(le32(18), le32(12), pad), Unknown, "not a Parquet file"},
		{"legacy root outside the message", cat(le32(16), le32(40), pad), Unknown, "not a Parquet file"},
		{"text", []byte("name,value\na,1\nb,2\n"), Unknown, "not a Parquet file"},
		{"short", []byte("abc"), Unknown, "not a Parquet file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			head := c.data[:min(len(c.data), detectLen)]
			tail := c.data[max(0, len(c.data)-detectLen):]
			got, err := Detect(head, tail, int64(len(c.data)))
			if c.wantErr != "" {
				assert.ErrorContains(t, err, c.wantErr)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, c.want, got)
		})
	}
}

func TestDetectFile(t *testing.T) {
	for name, want := range map[string]Format{
		"sample.parquet": Parquet,
		"sample.arrow":   IPCFile,
		"sample.arrows":  IPCStream,
	} {
		f, err := os.Open(filepath.Join(testdata, name))
		require.NoError(t, err)
		fi, err := f.Stat()
		require.NoError(t, err)
		got, err := DetectFile(f, fi.Size())
		f.Close()
		require.NoError(t, err, name)
		assert.Equal(t, want, got, name)
	}

	// A legacy-looking prefix that is no schema message is not a stream;
	// a continuation marker followed by garbage is a corrupt stream.
	legacy := append(append(le32(16), le32(12)...), bytes.Repeat([]byte{0xAB}, 64)...)
	got, err := DetectFile(bytes.NewReader(legacy), int64(len(legacy)))
	assert.ErrorIs(t, err, ErrUnknownFormat)
	assert.Equal(t, Unknown, got)

	marked := append(append(le32(continuation), le32(16)...), bytes.Repeat([]byte{0xAB}, 64)...)
	_, err = DetectFile(bytes.NewReader(marked), int64(len(marked)))
	assert.ErrorContains(t, err, "corrupt Arrow IPC stream")
}

func TestFormatString(t *testing.T) {
	assert.Equal(t, "parquet", Parquet.String())
	assert.Equal(t, "arrow-file", IPCFile.String())
	assert.Equal(t, "arrow-stream", IPCStream.String())
	assert.Equal(t, "unknown", Unknown.String())
}
