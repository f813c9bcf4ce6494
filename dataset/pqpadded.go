package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v17/parquet/metadata"
)

// parquet-mr pads the plaintext of an encrypted page header: a header of 17
// to 31 bytes is encrypted as 100. arrow-go v17's page reader decrypts the
// module but then skips only the header's thrift bytes (and the module's
// overhead), so it reads the next page from the wrong place. paddedHeaders
// serves arrow-go a file in which each encrypted column chunk's page
// headers are encrypted again, with the same key, nonce and AAD, without
// their padding; the pages themselves are copied as they are, the chunk
// keeps its offset, and its end is zeros (arrow-go reads pages until the
// chunk's values are read, never to the end). A chunk is translated when a
// read first reaches it, and kept until its task is done (forget): a worker
// reads one chunk at a time. The chunk's task charges both copies of it.

// paddedHeaders is the file f (of size bytes) as arrow-go is to read it.
type paddedHeaders struct {
	f    io.ReaderAt
	size int64
	keys *Keys
	kms  *kmsRetriever // (keys a KMS wraps: kms.go)

	mu      sync.Mutex
	chunks  []encryptedChunk // sorted by offset; none until setMeta
	fileAad string
	last    *translatedChunk
}

// encryptedChunk is an encrypted column chunk: bytes [off, end) of the
// file, of leaf column col in row group rg, with key.
type encryptedChunk struct {
	off, end int64
	rg, col  int
	dict     bool // it starts with a dictionary page
	key      []byte
}

type translatedChunk struct {
	c     encryptedChunk
	bytes []byte
}

// setMeta lists the encrypted chunks of md (the footer as arrow-go
// decrypted it, with its file decryptor) whose keys are known: from then
// on, reads within them are translated.
func (p *paddedHeaders) setMeta(md *metadata.FileMetaData) {
	if md == nil || md.FileDecryptor == nil {
		return
	}
	var chunks []encryptedChunk
	for rg := range md.RowGroups {
		rgm := md.RowGroup(rg)
		for col := 0; col < rgm.NumColumns(); col++ {
			raw := md.RowGroups[rg].Columns
			if col >= len(raw) || raw[col] == nil || !raw[col].IsSetCryptoMetadata() {
				continue
			}
			cm := raw[col].GetCryptoMetadata()
			var key []byte
			switch {
			case cm.IsSetENCRYPTION_WITH_FOOTER_KEY():
				if p.keys != nil {
					key = p.keys.Footer
				}
				if len(key) == 0 && p.kms != nil {
					key = []byte(md.FileDecryptor.GetFooterKey())
				}
			case cm.IsSetENCRYPTION_WITH_COLUMN_KEY():
				ck := cm.GetENCRYPTION_WITH_COLUMN_KEY()
				if p.keys != nil {
					key = p.keys.Columns[strings.Join(ck.GetPathInSchema(), ".")]
				}
				if len(key) == 0 && p.kms != nil {
					key = []byte(p.kms.GetKey(ck.GetKeyMetadata()))
				}
			}
			if len(key) == 0 {
				continue // (arrow-go says which key is missing)
			}
			if c, ok := encryptedChunkOf(md, rgm, rg, col, p.size); ok {
				c.key = key
				chunks = append(chunks, c)
			}
		}
	}
	sort.Slice(chunks, func(i, j int) bool { return chunks[i].off < chunks[j].off })
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chunks, p.fileAad = chunks, md.FileDecryptor.FileAad()
}

// encryptedChunkOf is the encrypted chunk of leaf column col in row group rg (rgm),
// and whether its metadata decrypts and its range lies in the file: where
// not (a wrong key, corrupt bytes), it is read as it is, and arrow-go says
// what is wrong with it as for any file.
func encryptedChunkOf(md *metadata.FileMetaData, rgm *metadata.RowGroupMetaData, rg, col int, size int64) (c encryptedChunk, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	cc, err := rgm.ColumnChunk(col)
	if err != nil {
		return c, false
	}
	off, n, err := chunkRange(md, cc, size)
	if err != nil {
		return c, false
	}
	return encryptedChunk{off: off, end: off + n, rg: rg, col: col, dict: cc.HasDictionaryPage()}, true
}

// ReadAt reads from the translated chunks where p lies in them, else from
// the file.
func (p *paddedHeaders) ReadAt(b []byte, off int64) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	read := 0
	for read < len(b) {
		at := off + int64(read)
		i := sort.Search(len(p.chunks), func(i int) bool { return p.chunks[i].end > at })
		if i == len(p.chunks) || p.chunks[i].off > at {
			// Outside the chunks: the file, up to the next chunk.
			upTo := len(b)
			if i < len(p.chunks) {
				upTo = min(upTo, read+int(p.chunks[i].off-at))
			}
			n, err := p.f.ReadAt(b[read:upTo], at)
			read += n
			if err != nil {
				return read, err
			}
			continue
		}
		t, err := p.translated(p.chunks[i])
		if err != nil {
			return read, err
		}
		read += copy(b[read:], t.bytes[at-t.c.off:])
	}
	return read, nil
}

// forget drops the chunk translated last (p nil: nothing to do).
func (p *paddedHeaders) forget() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = nil
}

// translated returns chunk c translated (the last one kept until forget).
func (p *paddedHeaders) translated(c encryptedChunk) (*translatedChunk, error) {
	if p.last != nil && p.last.c.off == c.off {
		return p.last, nil
	}
	raw := make([]byte, c.end-c.off)
	if _, err := p.f.ReadAt(raw, c.off); err != nil {
		if errors.Is(err, io.EOF) {
			err = errFileChanged
		}
		return nil, err
	}
	out, err := unpadHeaders(raw, c, p.fileAad)
	if err != nil {
		// A header that the key does not authenticate, or a chunk that
		// does not hold what its headers say: arrow-go reads the bytes as
		// they are, and says what is wrong with them (a wrong key, corrupt
		// bytes) as for any file.
		out = raw
	}
	p.last = &translatedChunk{c: c, bytes: out}
	return p.last, nil
}

// The Parquet modular encryption module types of page headers and pages.
const (
	moduleDataPage       = 2
	moduleDictPage       = 3
	moduleDataPageHeader = 4
	moduleDictPageHeader = 5
)

// moduleAad is the AAD of a module of chunk c: the file's AAD, the module
// type, the row group and column ordinals, and for data pages and their
// headers the page ordinal (little-endian int16s).
func moduleAad(fileAad string, module byte, c encryptedChunk, page int) []byte {
	aad := append([]byte(fileAad), module)
	aad = binary.LittleEndian.AppendUint16(aad, uint16(c.rg))
	aad = binary.LittleEndian.AppendUint16(aad, uint16(c.col))
	if module == moduleDataPage || module == moduleDataPageHeader {
		aad = binary.LittleEndian.AppendUint16(aad, uint16(page))
	}
	return aad
}

// unpadHeaders is the chunk raw (of c) with every page header module whose
// plaintext holds more than the header encrypted again without the rest,
// and zeros after the last page. A module is a 4-byte little-endian length,
// then a 12-byte nonce, the ciphertext and a 16-byte tag (AES-GCM); a page
// header's compressed size is its page module's bytes.
func unpadHeaders(raw []byte, c encryptedChunk, fileAad string) ([]byte, error) {
	const nonceLen, tagLen = 12, 16
	gcm, err := newGCM(c.key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(raw))
	pos, page, dict := 0, 0, c.dict
	for pos < len(raw) {
		if len(raw)-pos < 4 {
			break
		}
		n := int(binary.LittleEndian.Uint32(raw[pos:]))
		if n < nonceLen+tagLen || n > len(raw)-pos-4 {
			if len(out) > 0 {
				break // (past the last page: what the chunk's size leaves)
			}
			return nil, fmt.Errorf("corrupt encrypted page header: a module of %d bytes", n)
		}
		module := raw[pos : pos+4+n]
		nonce := module[4 : 4+nonceLen]
		typ := byte(moduleDataPageHeader)
		if dict {
			typ = moduleDictPageHeader
		}
		aad := moduleAad(fileAad, typ, c, page)
		plain, err := gcm.Open(nil, nonce, module[4+nonceLen:], aad)
		if err != nil {
			if len(out) > 0 {
				break // (past the last page)
			}
			return nil, fmt.Errorf("decrypting a page header: %w", err)
		}
		h, used, err := parsePageHeader(plain)
		if err != nil {
			return nil, fmt.Errorf("an encrypted page header: %w", err)
		}
		if used < len(plain) {
			sealed := gcm.Seal(nil, nonce, plain[:used], aad)
			out = binary.LittleEndian.AppendUint32(out, uint32(nonceLen+len(sealed)))
			out = append(out, nonce...)
			out = append(out, sealed...)
		} else {
			out = append(out, module...)
		}
		pos += 4 + n
		size := int(h.compressed)
		if size < 0 || size > len(raw)-pos {
			return nil, fmt.Errorf("corrupt encrypted page: %d bytes where %d are left in the chunk", size, len(raw)-pos)
		}
		out = append(out, raw[pos:pos+size]...)
		pos += size
		if dict {
			dict = false
		} else {
			page++
		}
	}
	return append(out, make([]byte, len(raw)-len(out))...), nil
}
