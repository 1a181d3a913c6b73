package edge

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tetherhq/tether/api"
)

// BenchmarkStrictScan measures the strict scan of a typical activity
// completion: a 100-byte payload in its request.
func BenchmarkStrictScan(b *testing.B) {
	body := []byte(`{"result":{"order_id":"ord-12345","amount":129.95,"currency":"EUR","items":[1,2,3],"paid":true,"note":null}}`)
	var cache SchemaCache
	sc := cache.Of(reflect.TypeOf(&api.CompleteActivityTaskRequest{}))
	lim := Limits{}.WithDefaults(4 << 20)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if p := Scan(body, sc, &lim); p != nil {
			b.Fatal(p.Message)
		}
	}
}

// BenchmarkDecodeOnly is the decoding the strict scan comes before, for
// comparison.
func BenchmarkDecodeOnly(b *testing.B) {
	body := []byte(`{"result":{"order_id":"ord-12345","amount":129.95,"currency":"EUR","items":[1,2,3],"paid":true,"note":null}}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var req api.CompleteActivityTaskRequest
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			b.Fatal(err)
		}
	}
}
