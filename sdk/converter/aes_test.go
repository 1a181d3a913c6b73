package converter_test

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/converter"
)

// The encryption codec of Temporal's samples-go "encryption" sample,
// written the way users write it: AES-GCM over the whole marshalled
// payload, the key id in the metadata.
const (
	metadataEncodingEncrypted = "binary/encrypted"
	metadataEncryptionKeyID   = "encryption-key-id"
)

type aesCodec struct {
	KeyID string
	Key   []byte
}

func (c *aesCodec) Encode(payloads []*common.Payload) ([]*common.Payload, error) {
	result := make([]*common.Payload, len(payloads))
	for i, p := range payloads {
		origBytes, err := p.Marshal()
		if err != nil {
			return payloads, err
		}
		b, err := c.encrypt(origBytes)
		if err != nil {
			return payloads, err
		}
		result[i] = &common.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(metadataEncodingEncrypted),
				metadataEncryptionKeyID:    []byte(c.KeyID),
			},
			Data: b,
		}
	}
	return result, nil
}

func (c *aesCodec) Decode(payloads []*common.Payload) ([]*common.Payload, error) {
	result := make([]*common.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.Metadata[converter.MetadataEncoding]) != metadataEncodingEncrypted {
			result[i] = p
			continue
		}
		if string(p.Metadata[metadataEncryptionKeyID]) != c.KeyID {
			return payloads, fmt.Errorf("unknown key id %q", p.Metadata[metadataEncryptionKeyID])
		}
		b, err := c.decrypt(p.Data)
		if err != nil {
			return payloads, err
		}
		result[i] = &common.Payload{}
		if err := result[i].Unmarshal(b); err != nil {
			return payloads, err
		}
	}
	return result, nil
}

func (c *aesCodec) encrypt(plain []byte) ([]byte, error) {
	block, err := aes.NewCipher(c.Key)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, gcm.NonceSize())
	_, _ = rand.Read(nonce)
	return gcm.Seal(nonce, nonce, plain, nil), nil
}

func (c *aesCodec) decrypt(data []byte) ([]byte, error) {
	block, err := aes.NewCipher(c.Key)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	if len(data) < gcm.NonceSize() {
		return nil, errors.New("ciphertext too short")
	}
	return gcm.Open(nil, data[:gcm.NonceSize()], data[gcm.NonceSize():], nil)
}

func newAESCodec() *aesCodec {
	return &aesCodec{KeyID: "test-key", Key: []byte("0123456789abcdef0123456789abcdef")}
}
