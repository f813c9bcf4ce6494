package dataset

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"
)

// Encrypted Parquet files (Parquet modular encryption) are read through
// arrow-go's decryption, given their keys (Options.Keys): the footer
// decrypted (or, in plaintext footer mode, its signature verified) when the
// file is opened, the encrypted column chunks decoded by pqarrow, each
// worker with a reader of its own (arrow-go's decryptors keep per-page state
// and are not safe for concurrent use). Encrypted chunks never take the page
// path, and their statistics are never used (stats.go): their page headers
// and metadata are arrow-go's to decrypt. An encrypted footer is checked
// against MaxFooterBytes only: its contents are arrow-go's to decode, once
// AES-GCM has authenticated them with the key given.
//
// A key missing is an error naming the file and what is missing (the
// footer key, the AAD prefix, the columns whose keys are missing); a key
// that does not authenticate what it decrypts is called a wrong key, since
// AES-GCM cannot tell it from altered bytes.

// Keys are the keys of encrypted Parquet files, for every file of a
// dataset; the zero value has none. Keys are AES keys of 16, 24 or 32 bytes
// (ParseKey reads them as the command line gives them).
type Keys struct {
	// Footer is the footer key: it decrypts an encrypted footer, verifies
	// the signature of a plaintext one, and decrypts the columns encrypted
	// with it (uniform encryption).
	Footer []byte
	// Columns are the keys of the columns encrypted with keys of their own,
	// by the column's path in the Parquet schema, dotted ("double_field",
	// "int64_field.list.element").
	Columns map[string][]byte
	// AADPrefix is the AAD prefix of files whose writer used one without
	// storing it (Parquet's disable_aad_prefix_storage). A prefix stored in
	// a file is checked against it; a file encrypted without one is read
	// whatever it says.
	AADPrefix []byte
	// KMS are master keys by their ID, with which the data keys of files
	// whose keys a key management service wraps (Parquet key material:
	// kms.go) are unwrapped, as the KMS would.
	KMS map[string][]byte
}

// empty says whether k has no key.
func (k *Keys) empty() bool {
	return k == nil || (len(k.Footer) == 0 && len(k.Columns) == 0 && len(k.AADPrefix) == 0 && len(k.KMS) == 0)
}

// properties are arrow-go's decryption properties for one reader of a file
// (arrow-go's are good for one file reader only, and wiped after use).
// Plaintext files are allowed; the AAD prefix is given when aad is set (the
// probe leaves it out of files encrypted without one). arrow-go does not
// verify a plaintext footer's signature: it signs its own serialization of
// the footer, which is not the writer's (parquet-mr's differs), so the probe
// verifies it over the footer's bytes (verifyPlaintextFooter) when the
// footer key is given (there is nothing to verify it with otherwise).
func (k *Keys) properties(plaintextFooter, aad bool, kms *kmsRetriever) *parquet.FileDecryptionProperties {
	opts := []parquet.FileDecryptionOption{parquet.WithPlaintextAllowed()}
	if kms != nil {
		opts = append(opts, parquet.WithKeyRetriever(kms))
	}
	if k == nil {
		k = &Keys{}
	}
	if len(k.Footer) > 0 {
		opts = append(opts, parquet.WithFooterKey(string(k.Footer)))
	}
	if plaintextFooter {
		opts = append(opts, parquet.DisableFooterSignatureVerification())
	}
	if len(k.Columns) > 0 {
		cols := make(parquet.ColumnPathToDecryptionPropsMap, len(k.Columns))
		for path, key := range k.Columns {
			cols[path] = parquet.NewColumnDecryptionProperties(path, parquet.WithDecryptKey(string(key)))
		}
		opts = append(opts, parquet.WithColumnKeys(cols))
	}
	if len(k.AADPrefix) > 0 && aad {
		opts = append(opts, parquet.WithDecryptAadPrefix(string(k.AADPrefix)))
	}
	return parquet.NewFileDecryptionProperties(opts...)
}

// The kinds of KeyError.
var (
	// ErrMissingKey is wrapped by the errors of encrypted files read
	// without a key they need.
	ErrMissingKey = errors.New("encrypted Parquet file: a key is missing")
	// ErrWrongKey is wrapped by the errors of keys that do not
	// authenticate what they decrypt.
	ErrWrongKey = errors.New("encrypted Parquet file: wrong key")
)

// KeyError is the error of an encrypted Parquet file read without the keys
// it needs, or with a wrong one. It wraps ErrMissingKey or ErrWrongKey.
type KeyError struct {
	Wrong bool
	msg   string
}

func (e *KeyError) Error() string { return e.msg }

func (e *KeyError) Unwrap() error {
	if e.Wrong {
		return ErrWrongKey
	}
	return ErrMissingKey
}

func missingKey(format string, args ...any) error {
	return &KeyError{msg: "encrypted Parquet file: " + fmt.Sprintf(format, args...)}
}

// errFooterSignature is the error of a plaintext footer whose signature the
// footer key given does not verify.
var errFooterSignature = wrongKey("the footer key given does not verify the plaintext footer's signature (AES-GCM): a wrong footer key, or an altered footer")

// verifyPlaintextFooter verifies the signature of the plaintext footer of
// the encrypted file f (of size bytes) with the footer key: the footer's
// bytes as they lie in the file are encrypted with the signature's nonce,
// under the footer's AAD (the file's AAD and module type 0), and the
// AES-GCM tag must be the signature's.
func verifyPlaintextFooter(f io.ReaderAt, size int64, md *metadata.FileMetaData, key []byte) error {
	const nonceLen, tagLen = 12, 16
	var tail [8]byte
	if err := readFull(f, tail[:], size-8); err != nil {
		return err
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n < nonceLen+tagLen || n > min(size-12, MaxFooterBytes) || md.FileDecryptor == nil {
		return fmt.Errorf("corrupt Parquet footer: %d bytes, too few for its signature", n)
	}
	footer := make([]byte, n)
	if err := readFull(f, footer, size-8-n); err != nil {
		return err
	}
	body, sig := footer[:n-nonceLen-tagLen], footer[n-nonceLen-tagLen:]
	gcm, err := newGCM(key)
	if err != nil {
		return wrongKey("the footer key: %v", err)
	}
	aad := append([]byte(md.FileDecryptor.FileAad()), 0) // (the footer module)
	sealed := gcm.Seal(nil, sig[:nonceLen], body, aad)
	if subtle.ConstantTimeCompare(sealed[len(sealed)-tagLen:], sig[nonceLen:]) != 1 {
		return errFooterSignature
	}
	return nil
}

// newGCM is AES-GCM (12-byte nonces, 16-byte tags, as Parquet's modular
// encryption and its key tools use it) with key, of 16, 24 or 32 bytes.
func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func wrongKey(format string, args ...any) error {
	return &KeyError{Wrong: true, msg: "encrypted Parquet file: " + fmt.Sprintf(format, args...)}
}

// gcmFailed says whether a panic of arrow-go's decryption is AES-GCM's
// authentication failing: a wrong key (or altered bytes).
func gcmFailed(p any) bool {
	return strings.Contains(fmt.Sprint(p), "message authentication failed")
}

// footerKeyError turns what arrow-go says (or panics with) when it opens an
// encrypted file into the KeyError it means; nil when it is something else.
// encryptedFooter tells the file's footer mode.
func footerKeyError(p any, keys *Keys, encryptedFooter bool) error {
	s := fmt.Sprint(p)
	switch {
	case strings.Contains(s, "no footer key"):
		if encryptedFooter {
			return missingKey("its footer is encrypted, and the footer key is missing (--footer-key)")
		}
		return missingKey("the footer key is missing (--footer-key)")
	case gcmFailed(p):
		return wrongKey("the footer key given does not decrypt the footer (AES-GCM authentication failed): a wrong footer key, or an altered footer")
	case strings.Contains(s, "signature verification failed"):
		return errFooterSignature
	case strings.Contains(s, "not stored in file and not supplied"):
		if encryptedFooter && (keys == nil || len(keys.Footer) == 0) {
			return missingKey("its footer is encrypted, and the footer key (--footer-key) and the AAD prefix its writer used without storing it in the file (--aad-prefix) are missing")
		}
		return missingKey("its writer used an AAD prefix without storing it in the file, and the AAD prefix is missing (--aad-prefix)")
	case strings.Contains(s, "AAD prefix in file and in properties but not the same"):
		return wrongKey("the AAD prefix given is not the one stored in the file (--aad-prefix)")
	}
	return nil
}

// missingColumnKeys checks that keys have what the encrypted column chunks
// of leaf columns cols need (every row group), and names those missing.
// md is the file's footer as arrow-go decoded it.
func missingColumnKeys(md *metadata.FileMetaData, cols []int, keys *Keys) error {
	var missing []string
	footer := false
	for _, rg := range md.RowGroups {
		for _, col := range cols {
			if rg == nil || col >= len(rg.Columns) || rg.Columns[col] == nil || !rg.Columns[col].IsSetCryptoMetadata() {
				continue
			}
			cm := rg.Columns[col].GetCryptoMetadata()
			switch {
			case cm.IsSetENCRYPTION_WITH_FOOTER_KEY():
				footer = footer || keys == nil || len(keys.Footer) == 0
			case cm.IsSetENCRYPTION_WITH_COLUMN_KEY():
				path := strings.Join(cm.GetENCRYPTION_WITH_COLUMN_KEY().GetPathInSchema(), ".")
				if keys == nil || len(keys.Columns[path]) == 0 {
					if !slices.Contains(missing, path) {
						missing = append(missing, path)
					}
				}
			}
		}
	}
	switch {
	case len(missing) > 0 && footer:
		return missingKey("the footer key (--footer-key) and the keys of its encrypted columns %s are missing (--column-key NAME:KEY)", quoteList(missing))
	case len(missing) > 0:
		return missingKey("the keys of its encrypted columns %s are missing (--column-key NAME:KEY)", quoteList(missing))
	case footer:
		return missingKey("its columns are encrypted with the footer key, which is missing (--footer-key)")
	}
	return nil
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// chunkEncrypted says whether the chunk of leaf column col in row group rg
// is encrypted, from the footer's thrift (without asking arrow-go to decrypt
// its metadata).
func chunkEncrypted(md *metadata.FileMetaData, rg, col int) bool {
	if rg < 0 || rg >= len(md.RowGroups) || md.RowGroups[rg] == nil {
		return false
	}
	cs := md.RowGroups[rg].Columns
	return col >= 0 && col < len(cs) && cs[col] != nil && cs[col].IsSetCryptoMetadata()
}

// ParseKey reads an AES key (16, 24 or 32 bytes) as written on a command
// line: hexadecimal ("30313233..."), base64 (standard or URL alphabet,
// padded or not), the text of the key after "text:" ("text:0123456789012345"),
// or a list of the key's characters in braces as the parquet-testing
// documentation writes them ("{0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5}": the key is
// the characters "0123456789012345").
func ParseKey(s string) ([]byte, error) {
	var key []byte
	switch {
	case strings.HasPrefix(s, "text:"):
		key = []byte(strings.TrimPrefix(s, "text:"))
	case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
		for _, c := range strings.Split(s[1:len(s)-1], ",") {
			c = strings.TrimSpace(c)
			if len(c) != 1 {
				return nil, fmt.Errorf("key %q: %q is not one character (a key in braces lists its characters)", s, c)
			}
			key = append(key, c[0])
		}
	default:
		if b, err := hex.DecodeString(s); err == nil && validKeyLen(len(b)) {
			return b, nil
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(s); err == nil && validKeyLen(len(b)) {
				return b, nil
			}
		}
		return nil, fmt.Errorf("key %q is neither hexadecimal nor base64 of 16, 24 or 32 bytes (an AES key; for a key of text write text:%s)", s, s)
	}
	if !validKeyLen(len(key)) {
		return nil, fmt.Errorf("key %q is %d bytes; an AES key is 16, 24 or 32", s, len(key))
	}
	return key, nil
}

func validKeyLen(n int) bool { return n == 16 || n == 24 || n == 32 }

// chunkPanicError is the error of a panic of arrow-go while it read the
// chunk of leaf column col in row group rg (md: the file's footer). In an
// encrypted chunk, AES-GCM failing to authenticate is a wrong key, and a
// key missing (which Aggregate checks before, missingColumnKeys) a missing
// one; any other failure there is encryptedChunkError's, but a fault of the
// mapped file (a file changed while it is read). Elsewhere it is
// faultError's.
func chunkPanicError(p any, md *metadata.FileMetaData, rg, col int) error {
	if !chunkEncrypted(md, rg, col) {
		return faultError(p)
	}
	s := fmt.Sprint(p)
	switch {
	case gcmFailed(p):
		return wrongKey("the key given does not decrypt the column chunk (AES-GCM authentication failed): a wrong key, or an altered file")
	case strings.Contains(s, "hidden column"), strings.Contains(s, "no footer key"):
		return missingKey("the key of the column chunk is missing")
	}
	if err := faultError(p); errors.Is(err, errFileChanged) {
		return err
	}
	return encryptedChunkError(panicError(p))
}

// errShortDecode is wrapped by the errors of a chunk that pqarrow decoded
// fewer rows of than the row group has.
var errShortDecode = errors.New("short decode")

// encryptedChunkError is the error of arrow-go's decoders failing in an
// encrypted chunk of a file whose metadata the keys given decrypt (AES-GCM
// authenticated it): what arrow-go v17 cannot decode rather than corrupt
// bytes (parquet-mr's padded page headers were such a case, before
// pqpadded.go).
func encryptedChunkError(err error) error {
	detail := err.Error()
	var ce *CorruptError
	if errors.As(err, &ce) {
		detail = ce.Detail
		if ce.Runtime != "" {
			detail = ce.Runtime
		}
	}
	return unsupported("unsupported: arrow-go v17 cannot decode this encrypted column chunk, though the keys given decrypt the file's metadata (its decoder failed: " + detail + ")")
}

// encryptedChunkCost bounds what arrow-go holds to decode encrypted chunk
// cc of leaf column col, whose page headers it decrypts itself: no page is
// larger than the chunk (its uncompressed and compressed sizes, as the
// decrypted metadata says, each at most maxPageBytes), held read, decrypted
// and decompressed; a dictionary page holds at most an entry per smallest
// encoded value of the page, each costing what dictEntryBytes says.
func encryptedChunkCost(md *metadata.FileMetaData, cc *metadata.ColumnChunkMetaData, col int) (page, dict int64) {
	page = min(max(cc.TotalUncompressedSize(), cc.TotalCompressedSize(), 0), maxPageBytes)
	page += page / 2 // (read and decrypted: the compressed page twice)
	if !cc.HasDictionaryPage() {
		return page, 0
	}
	descr := md.Schema.Column(col)
	smallest := int64(descr.PhysicalType().ByteSize())
	switch descr.PhysicalType() {
	case parquet.Types.ByteArray:
		smallest = 4 // (a length)
	case parquet.Types.FixedLenByteArray:
		smallest = int64(max(descr.TypeLength(), 1))
	}
	smallest = max(smallest, 1)
	unc := min(max(cc.TotalUncompressedSize(), 0), maxPageBytes)
	return page, min(unc+unc/smallest*dictEntryBytes(descr.PhysicalType(), descr.TypeLength()), MaxChunkDecodeBytes)
}

// checkEncryptedInt96 checks the INT96 values of the encrypted chunk of
// repeated leaf column col in row group rg against timestamp[ns]'s range
// (int96Convert), before pqarrow, which would wrap them around, reads them
// (a flat one is read by encryptedInt96 alone):
// the page walk that checks those of other chunks cannot read encrypted
// pages. The chunk is decoded once more for it, by arrow-go's column reader
// of pf (the worker's own).
func checkEncryptedInt96(ctx context.Context, pf *file.Reader, rg, col int) error {
	cr, err := pf.RowGroup(rg).Column(col)
	if err != nil {
		return err
	}
	r, ok := cr.(*file.Int96ColumnChunkReader)
	if !ok {
		return fmt.Errorf("an INT96 column read by a %T", cr)
	}
	const batch = 4096
	vals := make([]parquet.Int96, batch)
	def, rep := make([]int16, batch), make([]int16, batch)
	var ns [8]byte
	for r.HasNext() {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, n, err := r.ReadBatch(batch, vals, def, rep)
		if err != nil {
			return err
		}
		for i := range vals[:n] {
			if err := int96Convert(ns[:], vals[i][:], 1, arrow.Nanosecond); err != nil {
				return err
			}
		}
	}
	return r.Err()
}

// managedKeys says whether the encrypted footer of the file f, of size
// bytes, says that a key management service wraps its keys: its key
// metadata is Parquet key material (parquet-mr's and Arrow C++'s key tools:
// JSON with a "keyMaterialType"), not the name of a key.
func managedKeys(f io.ReaderAt, size int64) (managed bool) {
	defer func() {
		if recover() != nil {
			managed = false
		}
	}()
	var tail [8]byte
	if size < 12 || readFull(f, tail[:], size-8) != nil {
		return false
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > min(size-12, MaxFooterBytes) {
		return false
	}
	buf := make([]byte, n)
	if readFull(f, buf, size-8-n) != nil {
		return false
	}
	cm, err := metadata.NewFileCryptoMetaData(buf)
	return err == nil && bytes.Contains(cm.KeyMetadata(), []byte(`"keyMaterialType"`))
}
