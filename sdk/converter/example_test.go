package converter_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/tetherhq/tether/sdk/converter"
)

// A codec wraps the default converter; the client takes the result in
// client.Options.DataConverter.
func ExampleNewCodecDataConverter() {
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(),
		converter.NewZlibCodec(converter.ZlibCodecOptions{AlwaysEncode: true}))
	p, _ := dc.ToPayload(map[string]int{"items": 3})
	fmt.Println(string(p.Metadata[converter.MetadataEncoding]))
	var v map[string]int
	_ = dc.FromPayload(p, &v)
	fmt.Println(v["items"])

	// What travels through the REST API: an envelope, as the codec made it.
	wire, _ := converter.ToWire(dc, json.RawMessage(`{"items":3}`))
	fmt.Println(strings.HasPrefix(string(wire), `{"_tether_payload":{"metadata":{"encoding":"YmluYXJ5L3psaWI="}`))
	// With the default converter, the plain JSON.
	wire, _ = converter.ToWire(converter.GetDefaultDataConverter(), json.RawMessage(`{"items":3}`))
	fmt.Println(string(wire))
	// Output:
	// binary/zlib
	// 3
	// true
	// {"items":3}
}

// A codec server: what a UI or a CLI POSTs payloads to.
func ExampleNewPayloadCodecHTTPHandler() {
	srv := httptest.NewServer(converter.NewPayloadCodecHTTPHandler(converter.NewZlibCodec(converter.ZlibCodecOptions{AlwaysEncode: true})))
	defer srv.Close()
	post := func(path, body string) string {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	// {"items":3} as json/plain.
	enc := post("/encode", `{"payloads":[{"metadata":{"encoding":"anNvbi9wbGFpbg=="},"data":"eyJpdGVtcyI6M30="}]}`)
	fmt.Print(post("/decode", enc))
	// Output:
	// {"payloads":[{"metadata":{"encoding":"anNvbi9wbGFpbg=="},"data":"eyJpdGVtcyI6M30="}]}
}
