package dataset

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// compactPageHeader is the thrift compact encoding of the header of a data
// page v1 of n values in compressed bytes (PLAIN, RLE levels).
func compactPageHeader(n, compressed int32) []byte {
	zz := func(b []byte, v int32) []byte { return binary.AppendUvarint(b, uint64(uint32(v<<1)^uint32(v>>31))) }
	b := []byte{0x15, 0}                        // 1: type DATA_PAGE
	b = zz(append(b, 0x15), compressed)         // 2: uncompressed_page_size
	b = zz(append(b, 0x15), compressed)         // 3: compressed_page_size
	b = append(b, 0x2C)                         // 5: data_page_header
	b = zz(append(b, 0x15), n)                  //   1: num_values
	b = append(b, 0x15, 0, 0x15, 6, 0x15, 6, 0) //   2-4: encodings; stop
	return append(b, 0)                         // stop
}

// paddedChunk is a chunk of pages data page headers encrypted as parquet-mr
// encrypts them (the plaintext padded to 100 bytes) when pad is set, each
// followed by a page module of 40 bytes, then tail bytes of zeros; it
// returns the headers too.
func paddedChunk(t *testing.T, gcm cipher.AEAD, c encryptedChunk, fileAad string, pages int, pad bool, tail int) ([]byte, [][]byte) {
	var raw []byte
	var headers [][]byte
	for p := 0; p < pages; p++ {
		h := compactPageHeader(int32(10+p), 40)
		headers = append(headers, h)
		plain := h
		if pad {
			plain = append(append([]byte(nil), h...), make([]byte, 100-len(h))...)
		}
		nonce := bytes.Repeat([]byte{byte(p + 1)}, 12)
		sealed := gcm.Seal(nil, nonce, plain, moduleAad(fileAad, moduleDataPageHeader, c, p))
		raw = binary.LittleEndian.AppendUint32(raw, uint32(12+len(sealed)))
		raw = append(append(raw, nonce...), sealed...)
		raw = append(raw, bytes.Repeat([]byte{byte(0xA0 + p)}, 40)...)
	}
	return append(raw, make([]byte, tail)...), headers
}

func testGCM(t *testing.T, key []byte) cipher.AEAD {
	gcm, err := newGCM(key)
	require.NoError(t, err)
	return gcm
}

// unpadHeaders encrypts each padded page header again without its padding
// (same nonce and AAD: the page's ordinal), copies the pages, keeps the
// chunk's length with zeros, and leaves a chunk without padding as it is.
func TestUnpadHeaders(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	gcm := testGCM(t, key)
	c := encryptedChunk{rg: 2, col: 5, key: key}
	const fileAad = "prefix-and-unique"
	raw, headers := paddedChunk(t, gcm, c, fileAad, 3, true, 7)
	out, err := unpadHeaders(raw, c, fileAad)
	require.NoError(t, err)
	require.Len(t, out, len(raw))
	pos := 0
	for p, h := range headers {
		n := int(binary.LittleEndian.Uint32(out[pos:]))
		require.Equal(t, 12+len(h)+16, n, "page %d: the header's module holds the header alone", p)
		plain, err := gcm.Open(nil, out[pos+4:pos+16], out[pos+16:pos+4+n], moduleAad(fileAad, moduleDataPageHeader, c, p))
		require.NoError(t, err, "page %d", p)
		assert.Equal(t, h, plain)
		pos += 4 + n
		assert.Equal(t, bytes.Repeat([]byte{byte(0xA0 + p)}, 40), out[pos:pos+40], "page %d as it was", p)
		pos += 40
	}
	assert.Equal(t, make([]byte, len(raw)-pos), out[pos:], "zeros to the chunk's end")

	plain, _ := paddedChunk(t, gcm, c, fileAad, 3, false, 7)
	out, err = unpadHeaders(plain, c, fileAad)
	require.NoError(t, err)
	assert.Equal(t, plain, out, "nothing to unpad")

	// Another row group's AAD does not authenticate the first header.
	_, err = unpadHeaders(raw, encryptedChunk{rg: 3, col: 5, key: key}, fileAad)
	assert.ErrorContains(t, err, "decrypting a page header")
}

// Whatever its bytes, a chunk unpads to as many bytes, or to an error,
// without a panic.
func FuzzUnpadHeaders(f *testing.F) {
	key := []byte("0123456789abcdef")
	gcm, _ := newGCM(key)
	c := encryptedChunk{rg: 0, col: 1, key: key, dict: false}
	for _, pages := range []int{1, 2} {
		var raw []byte
		for p := 0; p < pages; p++ {
			h := compactPageHeader(int32(p), 8)
			plain := append(append([]byte(nil), h...), make([]byte, 100-len(h))...)
			nonce := make([]byte, 12)
			sealed := gcm.Seal(nil, nonce, plain, moduleAad("f", moduleDataPageHeader, c, p))
			raw = binary.LittleEndian.AppendUint32(raw, uint32(12+len(sealed)))
			raw = append(append(append(raw, nonce...), sealed...), make([]byte, 8)...)
		}
		f.Add(raw)
		f.Add(raw[:len(raw)/2])
	}
	f.Add([]byte{})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0x7F, 1, 2, 3})
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := unpadHeaders(raw, c, "f")
		if err == nil && len(out) != len(raw) {
			t.Fatalf("%d bytes unpadded to %d", len(raw), len(out))
		}
	})
}
