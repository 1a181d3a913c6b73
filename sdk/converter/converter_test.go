package converter_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/converter"
)

type order struct {
	ID    string `json:"id"`
	Items int    `json:"items"`
}

func encodingOf(p *common.Payload) string { return string(p.GetMetadata()[converter.MetadataEncoding]) }

func TestDefaultDataConverterRoundTrips(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	cases := []struct {
		in       any
		encoding string
		out      any
	}{
		{nil, converter.MetadataEncodingNil, new(*order)},
		{[]byte{0, 1, 2}, converter.MetadataEncodingBinary, new([]byte)},
		{order{ID: "o-1", Items: 3}, converter.MetadataEncodingJSON, new(order)},
		{"hi", converter.MetadataEncodingJSON, new(string)},
		{42, converter.MetadataEncodingJSON, new(int)},
	}
	for _, c := range cases {
		p, err := dc.ToPayload(c.in)
		if err != nil {
			t.Fatalf("%v: %v", c.in, err)
		}
		if encodingOf(p) != c.encoding {
			t.Fatalf("%v: encoding %q, want %q", c.in, encodingOf(p), c.encoding)
		}
		if err := dc.FromPayload(p, c.out); err != nil {
			t.Fatalf("%v: %v", c.in, err)
		}
		got := reflect.ValueOf(c.out).Elem().Interface()
		if c.in == nil {
			if got != (*order)(nil) {
				t.Fatalf("nil decoded as %v", got)
			}
			continue
		}
		if !reflect.DeepEqual(got, c.in) {
			t.Fatalf("round trip of %v gave %v", c.in, got)
		}
	}
	if !converter.IsDefault(dc) || !converter.IsDefault(nil) {
		t.Fatal("the default converter is not IsDefault")
	}
	if converter.IsDefault(converter.NewCompositeDataConverter(converter.NewJSONPayloadConverter())) {
		t.Fatal("a composite of the user's is IsDefault")
	}
}

// upperConverter takes strings only and writes them upper case.
type upperConverter struct{}

func (upperConverter) ToPayload(v any) (*common.Payload, error) {
	s, ok := v.(string)
	if !ok {
		return nil, nil
	}
	return &common.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte("text/upper")}, Data: []byte(strings.ToUpper(s))}, nil
}

func (upperConverter) FromPayload(p *common.Payload, ptr any) error {
	*(ptr.(*string)) = strings.ToLower(string(p.Data))
	return nil
}

func (upperConverter) ToString(p *common.Payload) string { return string(p.Data) }
func (upperConverter) Encoding() string                  { return "text/upper" }

func TestCompositeDataConverterOrder(t *testing.T) {
	dc := converter.NewCompositeDataConverter(upperConverter{}, converter.NewJSONPayloadConverter())
	ps, err := dc.ToPayloads("abc", 7)
	if err != nil {
		t.Fatal(err)
	}
	if encodingOf(ps.Payloads[0]) != "text/upper" || string(ps.Payloads[0].Data) != "ABC" {
		t.Fatalf("the first converter did not take the string: %q %q", encodingOf(ps.Payloads[0]), ps.Payloads[0].Data)
	}
	if encodingOf(ps.Payloads[1]) != converter.MetadataEncodingJSON {
		t.Fatalf("the int went to %q", encodingOf(ps.Payloads[1]))
	}
	var s string
	var n int
	if err := dc.FromPayloads(ps, &s, &n); err != nil || s != "abc" || n != 7 {
		t.Fatalf("FromPayloads: %q %d %v", s, n, err)
	}
	if got := dc.ToStrings(ps); !reflect.DeepEqual(got, []string{"ABC", "7"}) {
		t.Fatalf("ToStrings %q", got)
	}
	if err := dc.FromPayloads(ps, &s, &n, new(int)); !errors.Is(err, converter.ErrTooManyArg) {
		t.Fatalf("three targets for two payloads: %v", err)
	}
	bin := &common.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(converter.MetadataEncodingBinary)}}
	if err := dc.FromPayload(bin, new([]byte)); !errors.Is(err, converter.ErrEncodingIsNotSupported) {
		t.Fatalf("binary/plain without its converter: %v", err)
	}
	if err := dc.FromPayload(&common.Payload{}, new(int)); !errors.Is(err, converter.ErrMetadataIsNotSet) {
		t.Fatalf("no metadata: %v", err)
	}
	if _, err := converter.NewCompositeDataConverter(upperConverter{}).ToPayload(1); !errors.Is(err, converter.ErrUnableToFindConverter) {
		t.Fatalf("no converter for an int: %v", err)
	}
	if err := dc.FromPayload(ps.Payloads[1], n); !errors.Is(err, converter.ErrValuePtrIsNotPointer) {
		t.Fatalf("decode into a non-pointer: %v", err)
	}
}

func TestEncodedValues(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	ps, err := dc.ToPayloads("a", order{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	vs := converter.NewEncodedValues(ps, nil)
	var s string
	var o order
	if !vs.HasValues() || vs.Get(&s, &o) != nil || s != "a" || o.ID != "x" {
		t.Fatalf("values: %q %+v", s, o)
	}
	if converter.NewEncodedValues(nil, dc).HasValues() {
		t.Fatal("no payloads has values")
	}
	v := converter.NewEncodedValue(ps.Payloads[1], dc)
	if !v.HasValue() || v.Get(&o) != nil || o.ID != "x" {
		t.Fatalf("value: %+v", o)
	}
	if converter.NewEncodedValue(nil, dc).Get(&o) == nil {
		t.Fatal("Get of no value succeeded")
	}
}

// tagCodec appends its name to the "trail" metadata on encode and checks
// and removes it on decode.
type tagCodec struct{ name string }

func (c tagCodec) Encode(ps []*common.Payload) ([]*common.Payload, error) {
	out := make([]*common.Payload, len(ps))
	for i, p := range ps {
		m := map[string][]byte{}
		for k, v := range p.Metadata {
			m[k] = v
		}
		m["trail"] = append(append([]byte{}, m["trail"]...), c.name...)
		out[i] = &common.Payload{Metadata: m, Data: p.Data}
	}
	return out, nil
}

func (c tagCodec) Decode(ps []*common.Payload) ([]*common.Payload, error) {
	out := make([]*common.Payload, len(ps))
	for i, p := range ps {
		trail := string(p.Metadata["trail"])
		if !strings.HasSuffix(trail, c.name) {
			return nil, errors.New("codec " + c.name + " decodes out of order: trail " + trail)
		}
		m := map[string][]byte{}
		for k, v := range p.Metadata {
			m[k] = v
		}
		m["trail"] = []byte(strings.TrimSuffix(trail, c.name))
		if len(m["trail"]) == 0 {
			delete(m, "trail")
		}
		out[i] = &common.Payload{Metadata: m, Data: p.Data}
	}
	return out, nil
}

func TestCodecDataConverterOrder(t *testing.T) {
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), tagCodec{"a"}, tagCodec{"b"})
	p, err := dc.ToPayload(order{ID: "o"})
	if err != nil {
		t.Fatal(err)
	}
	// Encode runs the last codec first: codecs[0] sees what goes out.
	if got := string(p.Metadata["trail"]); got != "ba" {
		t.Fatalf("trail %q, want \"ba\"", got)
	}
	var o order
	if err := dc.FromPayload(p, &o); err != nil || o.ID != "o" {
		t.Fatalf("decode: %+v %v", o, err)
	}
	if got := dc.ToString(p); got != `{"id":"o","items":0}` {
		t.Fatalf("ToString %q", got)
	}
	if got := dc.ToString(nil); got != converter.ErrMetadataIsNotSet.Error() {
		t.Fatalf("ToString(nil) %q", got)
	}
}

func TestEncryptingCodecRoundTrip(t *testing.T) {
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), newAESCodec())
	ps, err := dc.ToPayloads(order{ID: "secret-order", Items: 2}, "x")
	if err != nil {
		t.Fatal(err)
	}
	p := ps.Payloads[0]
	if encodingOf(p) != metadataEncodingEncrypted || bytes.Contains(p.Data, []byte("secret-order")) {
		t.Fatalf("payload not encrypted: %q %q", encodingOf(p), p.Data)
	}
	var o order
	var s string
	if err := dc.FromPayloads(ps, &o, &s); err != nil || o.ID != "secret-order" || s != "x" {
		t.Fatalf("decode: %+v %q %v", o, s, err)
	}
	other := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), &aesCodec{KeyID: "other", Key: newAESCodec().Key})
	if err := other.FromPayload(p, &o); err == nil || !strings.Contains(err.Error(), "unknown key id") {
		t.Fatalf("decode with another key id: %v", err)
	}
}

func TestZlibCodec(t *testing.T) {
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), converter.NewZlibCodec(converter.ZlibCodecOptions{}))
	big := strings.Repeat("tether ", 200)
	p, err := dc.ToPayload(big)
	if err != nil {
		t.Fatal(err)
	}
	if encodingOf(p) != converter.MetadataEncodingZlib || len(p.Data) >= len(big) {
		t.Fatalf("a large value was not compressed: %q, %d bytes", encodingOf(p), len(p.Data))
	}
	var s string
	if err := dc.FromPayload(p, &s); err != nil || s != big {
		t.Fatalf("decode: %v", err)
	}
	small, _ := dc.ToPayload(1)
	if encodingOf(small) != converter.MetadataEncodingJSON {
		t.Fatalf("a small value was compressed: %q", encodingOf(small))
	}
	always := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), converter.NewZlibCodec(converter.ZlibCodecOptions{AlwaysEncode: true}))
	if p, _ := always.ToPayload(1); encodingOf(p) != converter.MetadataEncodingZlib {
		t.Fatalf("AlwaysEncode did not compress: %q", encodingOf(p))
	}
}

func TestWireForm(t *testing.T) {
	raw := json.RawMessage(`{"id":"secret-order","items":2}`)
	// The default converter: the plain JSON, unchanged.
	w, err := converter.ToWire(converter.GetDefaultDataConverter(), raw)
	if err != nil || !bytes.Equal(w, raw) {
		t.Fatalf("default ToWire %s %v", w, err)
	}
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), newAESCodec())
	w, err = converter.ToWire(dc, raw)
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]struct {
		Metadata map[string][]byte `json:"metadata"`
		Data     []byte            `json:"data"`
	}
	if err := json.Unmarshal(w, &env); err != nil || len(env) != 1 {
		t.Fatalf("not an envelope: %s %v", w, err)
	}
	inner := env[converter.EnvelopeKey]
	if string(inner.Metadata[converter.MetadataEncoding]) != metadataEncodingEncrypted || bytes.Contains(w, []byte("secret")) {
		t.Fatalf("envelope %s", w)
	}
	back, err := converter.FromWire(dc, w)
	if err != nil || !bytes.Equal(back, raw) {
		t.Fatalf("FromWire %s %v", back, err)
	}
	// A plain value read through any converter is itself.
	if back, err := converter.FromWire(dc, raw); err != nil || !bytes.Equal(back, raw) {
		t.Fatalf("FromWire of plain JSON %s %v", back, err)
	}
	// Without the key the envelope cannot be read, and says why.
	if _, err := converter.FromWire(converter.GetDefaultDataConverter(), w); !errors.Is(err, converter.ErrEncodingIsNotSupported) {
		t.Fatalf("FromWire without the codec: %v", err)
	}
	if w, err := converter.ToWire(dc, nil); err != nil || w != nil {
		t.Fatalf("ToWire of nothing: %s %v", w, err)
	}
}

func postCodec(t *testing.T, url string, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestPayloadCodecHTTPHandler(t *testing.T) {
	srv := httptest.NewServer(converter.NewPayloadCodecHTTPHandler(newAESCodec()))
	defer srv.Close()
	// {"id":"o-1"} as json/plain, in Temporal's codec server body.
	in := `{"payloads":[{"metadata":{"encoding":"anNvbi9wbGFpbg=="},"data":"eyJpZCI6Im8tMSJ9"}]}`
	resp, enc := postCodec(t, srv.URL+"/default/encode", in)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(enc), "YmluYXJ5L2VuY3J5cHRlZA==") {
		t.Fatalf("encode: %d %s", resp.StatusCode, enc)
	}
	resp, dec := postCodec(t, srv.URL+"/default/decode", string(enc))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("decode: %d %s", resp.StatusCode, dec)
	}
	var got, want any
	_ = json.Unmarshal(dec, &got)
	_ = json.Unmarshal([]byte(in), &want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decode gave %s, want %s", dec, in)
	}
	resp, b := postCodec(t, srv.URL+"/decode", `{"payloads":[{"data":12}]}`)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(b), `"field":"payloads"`) {
		t.Fatalf("bad body: %d %s", resp.StatusCode, b)
	}
	foreign := `{"payloads":[{"metadata":{"encoding":"YmluYXJ5L2VuY3J5cHRlZA==","encryption-key-id":"b3RoZXI="},"data":"AAAA"}]}`
	resp, b = postCodec(t, srv.URL+"/decode", foreign)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "unknown key id") {
		t.Fatalf("codec failure: %d %s", resp.StatusCode, b)
	}
	resp, b = postCodec(t, srv.URL+"/other", in)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown path: %d %s", resp.StatusCode, b)
	}
	g, err := http.Get(srv.URL + "/encode")
	if err != nil {
		t.Fatal(err)
	}
	g.Body.Close()
	if g.StatusCode != http.StatusMethodNotAllowed || g.Header.Get("Allow") != http.MethodPost {
		t.Fatalf("GET: %d", g.StatusCode)
	}
}

func TestPayloadMarshal(t *testing.T) {
	p := &common.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`1`)}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var q common.Payload
	if err := q.Unmarshal(b); err != nil || !reflect.DeepEqual(&q, p) {
		t.Fatalf("unmarshal %+v %v", q, err)
	}
	if err := q.Unmarshal([]byte("x")); err == nil {
		t.Fatal("unmarshal of garbage succeeded")
	}
}

func TestRemotePayloadCodec(t *testing.T) {
	srv := httptest.NewServer(converter.NewPayloadCodecHTTPHandler(newAESCodec()))
	defer srv.Close()
	var auth []string
	remote := converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{
		Endpoint: srv.URL + "/",
		ModifyRequest: func(r *http.Request) error {
			auth = append(auth, r.URL.Path)
			return nil
		},
	})
	// Encrypted remotely, decrypted locally, and the other way round.
	remoteDC := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), remote)
	localDC := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), newAESCodec())
	p, err := remoteDC.ToPayload(order{ID: "secret-order"})
	if err != nil || encodingOf(p) != metadataEncodingEncrypted {
		t.Fatalf("remote encode: %v %v", p, err)
	}
	var o order
	if err := localDC.FromPayload(p, &o); err != nil || o.ID != "secret-order" {
		t.Fatalf("local decode: %+v %v", o, err)
	}
	p, _ = localDC.ToPayload(order{ID: "o-2"})
	if err := remoteDC.FromPayload(p, &o); err != nil || o.ID != "o-2" {
		t.Fatalf("remote decode: %+v %v", o, err)
	}
	if !reflect.DeepEqual(auth, []string{"/encode", "/decode"}) {
		t.Fatalf("requests %v", auth)
	}
	// The server's refusal is the codec's error, with the server's words.
	other := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), &aesCodec{KeyID: "other", Key: newAESCodec().Key})
	p, _ = other.ToPayload(1)
	if err := remoteDC.FromPayload(p, &o); err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "unknown key id") {
		t.Fatalf("refused decode: %v", err)
	}
	down := converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{Endpoint: "http://127.0.0.1:1"})
	if _, err := down.Decode([]*common.Payload{p}); err == nil || !strings.Contains(err.Error(), "codec server") {
		t.Fatalf("unreachable server: %v", err)
	}
}
