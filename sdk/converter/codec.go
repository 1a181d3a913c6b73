package converter

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tetherhq/tether/sdk/common"
)

// PayloadCodec transforms encoded payloads: encryption, compression
// (Temporal's converter.PayloadCodec). Decode must undo Encode.
type PayloadCodec interface {
	// Encode transforms payloads on their way out.
	Encode(payloads []*common.Payload) ([]*common.Payload, error)
	// Decode undoes Encode.
	Decode(payloads []*common.Payload) ([]*common.Payload, error)
}

// CodecDataConverter is a DataConverter whose payloads go through codecs
// after its parent converts the values.
type CodecDataConverter struct {
	parent DataConverter
	codecs []PayloadCodec
}

// NewCodecDataConverter returns parent with codecs applied to its
// payloads: on encode from the last codec to the first, on decode from the
// first to the last (as Temporal's), so that codecs[0] sees what goes on
// the wire.
func NewCodecDataConverter(parent DataConverter, codecs ...PayloadCodec) DataConverter {
	return &CodecDataConverter{parent: parent, codecs: codecs}
}

func encodeAll(codecs []PayloadCodec, ps []*common.Payload) ([]*common.Payload, error) {
	var err error
	for i := len(codecs) - 1; i >= 0; i-- {
		if ps, err = codecs[i].Encode(ps); err != nil {
			return nil, fmt.Errorf("codec %T: encode: %w", codecs[i], err)
		}
	}
	return ps, nil
}

func decodeAll(codecs []PayloadCodec, ps []*common.Payload) ([]*common.Payload, error) {
	var err error
	for _, c := range codecs {
		if ps, err = c.Decode(ps); err != nil {
			return nil, fmt.Errorf("codec %T: decode: %w", c, err)
		}
	}
	return ps, nil
}

// Encode applies the converter's codecs to payloads (what ToPayload does
// after the parent's conversion).
func (c *CodecDataConverter) Encode(payloads []*common.Payload) ([]*common.Payload, error) {
	return encodeAll(c.codecs, payloads)
}

// Decode undoes Encode.
func (c *CodecDataConverter) Decode(payloads []*common.Payload) ([]*common.Payload, error) {
	return decodeAll(c.codecs, payloads)
}

// ToPayload implements DataConverter.
func (c *CodecDataConverter) ToPayload(value any) (*common.Payload, error) {
	p, err := c.parent.ToPayload(value)
	if err != nil || p == nil {
		return p, err
	}
	ps, err := c.Encode([]*common.Payload{p})
	if err != nil {
		return nil, err
	}
	if len(ps) != 1 {
		return nil, fmt.Errorf("codecs returned %d payloads for 1: %w", len(ps), ErrUnableToEncode)
	}
	return ps[0], nil
}

// FromPayload implements DataConverter.
func (c *CodecDataConverter) FromPayload(payload *common.Payload, valuePtr any) error {
	if payload == nil {
		return nil
	}
	ps, err := c.Decode([]*common.Payload{payload})
	if err != nil {
		return err
	}
	if len(ps) != 1 {
		return fmt.Errorf("codecs returned %d payloads for 1: %w", len(ps), ErrUnableToDecode)
	}
	return c.parent.FromPayload(ps[0], valuePtr)
}

// ToPayloads implements DataConverter.
func (c *CodecDataConverter) ToPayloads(values ...any) (*common.Payloads, error) {
	ps, err := c.parent.ToPayloads(values...)
	if err != nil || ps == nil {
		return ps, err
	}
	out, err := c.Encode(ps.Payloads)
	if err != nil {
		return nil, err
	}
	return &common.Payloads{Payloads: out}, nil
}

// FromPayloads implements DataConverter.
func (c *CodecDataConverter) FromPayloads(payloads *common.Payloads, valuePtrs ...any) error {
	if payloads == nil {
		return c.parent.FromPayloads(nil, valuePtrs...)
	}
	ps, err := c.Decode(payloads.Payloads)
	if err != nil {
		return err
	}
	return c.parent.FromPayloads(&common.Payloads{Payloads: ps}, valuePtrs...)
}

// ToString decodes the payload and renders it with the parent (the error
// text when a codec fails).
func (c *CodecDataConverter) ToString(input *common.Payload) string {
	if input == nil {
		return c.parent.ToString(nil)
	}
	ps, err := c.Decode([]*common.Payload{input})
	if err != nil {
		return err.Error()
	}
	return c.parent.ToString(ps[0])
}

// ToStrings implements DataConverter.
func (c *CodecDataConverter) ToStrings(input *common.Payloads) []string {
	return toStrings(c, input)
}

// MetadataEncodingZlib is the encoding of a payload compressed by the zlib
// codec; the original payload is its data.
const MetadataEncodingZlib = "binary/zlib"

// ZlibCodecOptions configure NewZlibCodec.
type ZlibCodecOptions struct {
	// AlwaysEncode compresses even when the result is not smaller.
	AlwaysEncode bool
}

type zlibCodec struct{ opts ZlibCodecOptions }

// NewZlibCodec returns a codec that compresses payloads with zlib
// (Temporal's converter.NewZlibCodec).
func NewZlibCodec(options ZlibCodecOptions) PayloadCodec { return &zlibCodec{opts: options} }

func (z *zlibCodec) Encode(payloads []*common.Payload) ([]*common.Payload, error) {
	out := make([]*common.Payload, len(payloads))
	for i, p := range payloads {
		raw, err := p.Marshal()
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		_, _ = w.Write(raw) // writes to a bytes.Buffer do not fail
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("zlib: %w", err)
		}
		if !z.opts.AlwaysEncode && b.Len() >= len(raw) {
			out[i] = p
			continue
		}
		out[i] = newPayload(b.Bytes(), MetadataEncodingZlib)
	}
	return out, nil
}

func (z *zlibCodec) Decode(payloads []*common.Payload) ([]*common.Payload, error) {
	out := make([]*common.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[MetadataEncoding]) != MetadataEncodingZlib {
			out[i] = p
			continue
		}
		r, err := zlib.NewReader(bytes.NewReader(p.Data))
		if err != nil {
			return nil, fmt.Errorf("zlib: %w", err)
		}
		raw, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("zlib: %w", err)
		}
		out[i] = &common.Payload{}
		if err := out[i].Unmarshal(raw); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// codecBody is the body of a codec server's requests and answers:
// Temporal's Payloads in protobuf JSON, whose bytes are base64.
type codecBody struct {
	Payloads []wirePayload `json:"payloads"`
}

// NewPayloadCodecHTTPHandler returns a codec server (Temporal's): POST
// …/encode and …/decode take {"payloads":[{"metadata":{…},"data":"…"}]}
// (metadata values and data in base64) and answer the payloads encoded or
// decoded by codecs, applied in the order of NewCodecDataConverter. Bad
// input is a 400 problem; a codec's failure too, naming the codec.
func NewPayloadCodecHTTPHandler(codecs ...PayloadCodec) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var run func([]PayloadCodec, []*common.Payload) ([]*common.Payload, error)
		switch {
		case strings.HasSuffix(r.URL.Path, "/encode"):
			run = encodeAll
		case strings.HasSuffix(r.URL.Path, "/decode"):
			run = decodeAll
		default:
			problem(w, http.StatusNotFound, "path", "want a path ending in /encode or /decode")
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			problem(w, http.StatusMethodNotAllowed, "method", "want POST")
			return
		}
		var in codecBody
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20))
		if err := dec.Decode(&in); err != nil {
			problem(w, http.StatusBadRequest, "payloads", "want {\"payloads\":[{\"metadata\":{…},\"data\":\"base64\"}]}: "+err.Error())
			return
		}
		ps := make([]*common.Payload, len(in.Payloads))
		for i, p := range in.Payloads {
			ps[i] = &common.Payload{Metadata: p.Metadata, Data: p.Data}
		}
		out, err := run(codecs, ps)
		if err != nil {
			problem(w, http.StatusBadRequest, "payloads", err.Error())
			return
		}
		ans := codecBody{Payloads: make([]wirePayload, len(out))}
		for i, p := range out {
			ans.Payloads[i] = wirePayload{Metadata: p.GetMetadata(), Data: p.GetData()}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(ans)
	})
}

// problem writes an application/problem+json answer naming field.
func problem(w http.ResponseWriter, status int, field, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"title":  http.StatusText(status),
		"status": status,
		"detail": field + ": " + detail,
		"errors": []map[string]string{{"field": field, "message": detail}},
	})
}
