package dataset

import (
	"testing"

	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/golang/snappy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// arrow-go's registered snappy codec is the one that decodes with
// internal/snappy (every reader in the process, the page path's and
// pqarrow's, decodes snappy pages the same way), and it keeps arrow-go's
// contract: the decoded bytes, a panic on corrupt ones, and no bytes
// decoded to none.
func TestSnappyCodecRegistered(t *testing.T) {
	c, err := compress.GetCodec(compress.Codecs.Snappy)
	require.NoError(t, err)
	e, ok := c.(emptyCodec)
	require.True(t, ok, "%T", c)
	_, ok = e.Codec.(snappyCodec)
	require.True(t, ok, "%T", e.Codec)

	raw := make([]byte, 10_000)
	for i := range raw {
		raw[i] = byte(i * i % 251)
	}
	enc := snappy.Encode(nil, raw)
	assert.Equal(t, raw, c.Decode(make([]byte, len(raw)), enc))
	assert.Panics(t, func() { c.Decode(make([]byte, len(raw)), enc[:len(enc)-1]) })
	assert.Empty(t, c.Decode([]byte{}, nil))
}
