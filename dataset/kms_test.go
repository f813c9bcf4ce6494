package dataset

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wrapKeyForTest wraps key with wrapper under aad as the key tools do:
// base64 of a nonce, the ciphertext and the tag.
func wrapKeyForTest(t *testing.T, wrapper, key, aad []byte) string {
	gcm := testGCM(t, wrapper)
	nonce := []byte("twelve bytes")
	return base64.StdEncoding.EncodeToString(gcm.Seal(append([]byte(nil), nonce...), nonce, key, aad))
}

// Key material is unwrapped with the master key it names: wrapped once
// (internal storage, in the key metadata itself) or twice (through a
// key-encryption key, kept in the external file beside the Parquet file);
// a master key missing or wrong is a KeyError saying which.
func TestKMSRetriever(t *testing.T) {
	master := []byte("0123456789012345")
	dek := []byte("data key 16bytes")
	kek, kekID := []byte("key encrypt key!"), []byte("kek identifier!!")
	single, err := json.Marshal(keyMaterial{Type: "PKMT1", Internal: true, MasterKeyID: "m1", WrappedDEK: wrapKeyForTest(t, master, dek, []byte("m1"))})
	require.NoError(t, err)
	double, err := json.Marshal(keyMaterial{Type: "PKMT1", MasterKeyID: "m1", DoubleWrapping: true,
		KEKID: base64.StdEncoding.EncodeToString(kekID), WrappedKEK: wrapKeyForTest(t, master, kek, []byte("m1")),
		WrappedDEK: wrapKeyForTest(t, kek, dek, kekID)})
	require.NoError(t, err)
	dir := t.TempDir()
	path := filepath.Join(dir, "f.parquet.encrypted")
	ext, err := json.Marshal(map[string]string{"footerKey": string(double)})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(externalMaterialPath(path), ext, 0o644))
	reference := []byte(`{"keyMaterialType":"PKMT1","internalStorage":false,"keyReference":"footerKey"}`)

	r := &kmsRetriever{master: map[string][]byte{"m1": master}, path: path}
	assert.Equal(t, string(dek), r.GetKey(single), "wrapped once, in the key metadata")
	assert.Equal(t, string(dek), r.GetKey(reference), "wrapped twice, in the external material")
	require.NoError(t, r.failed())

	r = &kmsRetriever{master: map[string][]byte{"other": master}, path: path}
	assert.Empty(t, r.GetKey(single))
	assert.ErrorIs(t, r.failed(), ErrMissingKey)
	assert.ErrorContains(t, r.failed(), `the master key "m1" of a key management service, which is missing (--kms-key m1:KEY)`)

	r = &kmsRetriever{master: map[string][]byte{"m1": []byte("another key 16by")}, path: path}
	assert.Empty(t, r.GetKey(reference))
	assert.ErrorIs(t, r.failed(), ErrWrongKey)
	assert.ErrorContains(t, r.failed(), `the master key "m1" given does not unwrap its key-encryption key`)

	r = &kmsRetriever{master: map[string][]byte{"m1": master}, path: filepath.Join(dir, "elsewhere.parquet")}
	assert.Empty(t, r.GetKey(reference))
	assert.ErrorContains(t, r.failed(), "its key material is kept outside it")
}

// parquet-testing's external_key_material_java.parquet.encrypted (parquet-mr,
// external key material, double wrapping, InMemoryKMS): read with the
// master keys the README's key IDs name, as Arrow C++'s
// TestOnlyInServerWrapKms holds them.
func TestKMSFile(t *testing.T) {
	path := parquetTesting(t, "external_key_material_java.parquet.encrypted")
	master := map[string][]byte{"kf": []byte("0123456789012345"), "kc1": []byte("1234567890123450"), "kc2": []byte("1234567890123451")}
	mem := memory.DefaultAllocator
	sum, _, err := aggregatePaths(t.Context(), t, mem, []string{path}, nil, Options{Keys: &Keys{KMS: master}})
	require.NoError(t, err)
	require.Len(t, sum.Results, 2)
	assert.Equal(t, int64(100), sum.Rows)
	assert.Equal(t, "integers", sum.Results[0].Name)
	assert.Equal(t, int64(100), sum.Results[0].Count)
	assert.Equal(t, "4950", sum.Results[0].Sum.String())

	_, _, err = aggregatePaths(t.Context(), t, mem, []string{path}, nil, Options{})
	assert.ErrorIs(t, err, ErrMissingKey)
	assert.ErrorContains(t, err, "the master keys are missing")
	_, _, err = aggregatePaths(t.Context(), t, mem, []string{path}, nil, Options{Keys: &Keys{KMS: map[string][]byte{"kf": master["kf"]}}})
	assert.ErrorIs(t, err, ErrMissingKey)
	assert.ErrorContains(t, err, `the master key "kc1" of a key management service, which is missing`)
}
