package dataset

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Parquet key material (parquet-mr's and Arrow C++'s key tools, "PKMT1"):
// the keys of an encrypted file are data keys wrapped by master keys that a
// key management service (KMS) holds. The key metadata of the footer and of
// each column is JSON: the material itself ("internalStorage": true), or a
// reference into a file beside the Parquet file,
// _KEY_MATERIAL_FOR_<name>.json (external key material). A material names
// its master key and holds its data key wrapped: with the master key
// directly, or ("doubleWrapping") with a key-encryption key (KEK) that the
// master key wraps. A wrapped key is base64 of an AES-GCM nonce, ciphertext
// and tag; the master key's AAD is its ID, the KEK's its own ID's bytes.
//
// arrowagg unwraps them with master keys the user gives (Keys.KMS, the
// command's --kms-key ID:KEY), as the KMS would: what the test KMSs of
// parquet-mr (InMemoryKMS) and Arrow C++ (TestOnlyInServerWrapKms) do. A
// KMS reached over the network is not supported.

// keyMaterial is one key's material.
type keyMaterial struct {
	Type           string `json:"keyMaterialType"`
	Internal       bool   `json:"internalStorage"`
	Reference      string `json:"keyReference"`
	MasterKeyID    string `json:"masterKeyID"`
	WrappedDEK     string `json:"wrappedDEK"`
	DoubleWrapping bool   `json:"doubleWrapping"`
	KEKID          string `json:"keyEncryptionKeyID"`
	WrappedKEK     string `json:"wrappedKEK"`
}

// kmsRetriever is arrow-go's key retriever of one file: it unwraps the key
// a key metadata describes with the master keys given, and keeps the first
// error (arrow-go only sees an empty key).
type kmsRetriever struct {
	master   map[string][]byte
	path     string // the Parquet file, whose external key material lies beside it
	once     sync.Once
	external map[string]string // keyReference -> material JSON
	extErr   error

	mu  sync.Mutex
	err error
}

// GetKey implements parquet.DecryptionKeyRetriever.
func (r *kmsRetriever) GetKey(keyMetadata []byte) string {
	key, err := r.unwrap(keyMetadata)
	if err != nil {
		r.mu.Lock()
		if r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
		return ""
	}
	return string(key)
}

// failed is the first error of GetKey, nil when none.
func (r *kmsRetriever) failed() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// externalMaterialPath is where the external key material of the Parquet
// file path lies.
func externalMaterialPath(path string) string {
	return filepath.Join(filepath.Dir(path), "_KEY_MATERIAL_FOR_"+filepath.Base(path)+".json")
}

func (r *kmsRetriever) unwrap(keyMetadata []byte) ([]byte, error) {
	var m keyMaterial
	if err := json.Unmarshal(keyMetadata, &m); err != nil || m.Type == "" && m.Reference == "" {
		return nil, errors.New("its key metadata is not Parquet key material")
	}
	if !m.Internal {
		r.once.Do(func() {
			b, err := os.ReadFile(externalMaterialPath(r.path))
			if err != nil {
				r.extErr = fmt.Errorf("its key material is kept outside it: %w", err)
				return
			}
			if err := json.Unmarshal(b, &r.external); err != nil {
				r.extErr = fmt.Errorf("its key material %s: %w", externalMaterialPath(r.path), err)
			}
		})
		if r.extErr != nil {
			return nil, r.extErr
		}
		s, ok := r.external[m.Reference]
		if !ok {
			return nil, fmt.Errorf("its key material %s has no key %q", externalMaterialPath(r.path), m.Reference)
		}
		m = keyMaterial{}
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return nil, fmt.Errorf("its key material %s, key %q: %w", externalMaterialPath(r.path), m.Reference, err)
		}
	}
	if m.Type != "" && m.Type != "PKMT1" {
		return nil, fmt.Errorf("key material of type %q (PKMT1 is read)", m.Type)
	}
	master, ok := r.master[m.MasterKeyID]
	if !ok {
		return nil, &KeyError{msg: fmt.Sprintf("encrypted Parquet file: its keys are wrapped by the master key %q of a key management service, which is missing (--kms-key %s:KEY)", m.MasterKeyID, m.MasterKeyID)}
	}
	wrapKey, aad := master, []byte(m.MasterKeyID)
	if m.DoubleWrapping {
		kek, err := unwrapKey(master, m.WrappedKEK, []byte(m.MasterKeyID))
		if err != nil {
			return nil, wrongKey("the master key %q given does not unwrap its key-encryption key (%v)", m.MasterKeyID, err)
		}
		kekID, err := base64.StdEncoding.DecodeString(m.KEKID)
		if err != nil {
			return nil, fmt.Errorf("its key material: a key-encryption key ID %q: %w", m.KEKID, err)
		}
		wrapKey, aad = kek, kekID
	}
	dek, err := unwrapKey(wrapKey, m.WrappedDEK, aad)
	if err != nil {
		return nil, wrongKey("the master key %q given does not unwrap its data key (%v)", m.MasterKeyID, err)
	}
	return dek, nil
}

// unwrapKey opens wrapped (base64 of an AES-GCM nonce, ciphertext and tag)
// with key under aad.
func unwrapKey(key []byte, wrapped string, aad []byte) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(wrapped)
	if err != nil {
		return nil, err
	}
	if len(b) < 12+16 {
		return nil, fmt.Errorf("a wrapped key of %d bytes", len(b))
	}
	gcm, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	return gcm.Open(nil, b[:12], b[12:], aad)
}
