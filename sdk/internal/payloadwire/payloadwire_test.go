package payloadwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/converter"
)

// flipCodec reverses the data and marks it binary/flipped; it fails on
// data containing "poison".
type flipCodec struct{}

func (flipCodec) Encode(ps []*common.Payload) ([]*common.Payload, error) {
	out := make([]*common.Payload, len(ps))
	for i, p := range ps {
		if bytes.Contains(p.Data, []byte("poison")) {
			return nil, errors.New("poisoned")
		}
		b, _ := p.Marshal()
		out[i] = &common.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte("binary/flipped")}, Data: reverse(b)}
	}
	return out, nil
}

func (flipCodec) Decode(ps []*common.Payload) ([]*common.Payload, error) {
	out := make([]*common.Payload, len(ps))
	for i, p := range ps {
		if string(p.Metadata[converter.MetadataEncoding]) != "binary/flipped" {
			out[i] = p
			continue
		}
		out[i] = &common.Payload{}
		if err := out[i].Unmarshal(reverse(p.Data)); err != nil {
			return nil, err
		}
		if bytes.Contains(out[i].Data, []byte("poison")) {
			return nil, errors.New("poisoned")
		}
	}
	return out, nil
}

func reverse(b []byte) []byte {
	r := make([]byte, len(b))
	for i := range b {
		r[len(b)-1-i] = b[i]
	}
	return r
}

func normalize(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

func TestEncodeDecodeBody(t *testing.T) {
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), flipCodec{})
	body := []byte(`{"workflow_type":"W","input":{"secret":1},
		"history":[{"kind":"ActivityCompleted","result":"secret-result"},{"kind":"X","error":{"message":"m","details":[1,"secret"]}}],
		"memo":{"note":"secret-note"},"search_attributes":{"Customer":"c-1"},"signal_input":null}`)
	enc, err := Encode(dc, body)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(enc, []byte("secret")) {
		t.Fatalf("a payload was sent in clear: %s", enc)
	}
	if got := strings.Count(string(enc), converter.EnvelopeKey); got != 4 {
		t.Fatalf("%d envelopes, want 4 (input, result, details, memo.note): %s", got, enc)
	}
	if !bytes.Contains(enc, []byte(`"search_attributes":{"Customer":"c-1"}`)) || !bytes.Contains(enc, []byte(`"workflow_type":"W"`)) {
		t.Fatalf("a field that is not a payload changed: %s", enc)
	}
	dec, err := Decode(dc, enc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalize(t, dec), normalize(t, body)) {
		t.Fatalf("decode gave %s, want %s", dec, body)
	}
}

func TestCodecFailures(t *testing.T) {
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), flipCodec{})
	_, err := Encode(dc, []byte(`{"token":"t","result":"poison"}`))
	var ce *converter.PayloadCodecError
	if !errors.As(err, &ce) || !ce.Encode || ce.Field != "result" || !strings.Contains(err.Error(), "poisoned") {
		t.Fatalf("encode failure: %v", err)
	}
	// A payload that fails to decode stays an envelope; the rest is read.
	poisoned := &common.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte("json/plain")}, Data: []byte(`"poison"`)}
	b, _ := poisoned.Marshal()
	env, _ := converter.PayloadToWire(&common.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte("binary/flipped")}, Data: reverse(b)})
	good, _ := converter.ToWire(dc, json.RawMessage(`2`))
	body := []byte(`{"lock_token":"t1","input":` + string(env) + `,"result":` + string(good) + `}`)
	dec, err := Decode(dc, body)
	if !errors.As(err, &ce) || ce.Encode || ce.Field != "input" {
		t.Fatalf("decode failure: %v", err)
	}
	var got struct {
		LockToken string          `json:"lock_token"`
		Input     json.RawMessage `json:"input"`
		Result    json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(dec, &got); err != nil || got.LockToken != "t1" || string(got.Result) != "2" || !bytes.Contains(got.Input, []byte(converter.EnvelopeKey)) {
		t.Fatalf("the rest of the body: %s %v", dec, err)
	}
}
