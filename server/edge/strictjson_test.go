package edge

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/tetherhq/tether/api"
)

// TestStrictScanNumbers checks which payload numbers pass the growth
// budget: ordinary floats do, long zero runs do not.
func TestStrictScanNumbers(t *testing.T) {
	var cache SchemaCache
	sc := cache.Of(reflect.TypeOf(&api.SignalRequest{}))
	lim := Limits{NumberExpansion: 64}.WithDefaults(4 << 20)
	for _, tc := range []struct {
		input string
		ok    bool
	}{
		{`0`, true}, {`-0.5`, true}, {`1.5e-7`, true}, {`1E+21`, true}, {`123.456e2`, true},
		{`[1e20,1e20]`, true},
		{`1e100`, false}, {`1e-100`, false}, {`-1E+1000`, false}, {`[1e30,1e30,1e30,1e30]`, false},
		{`{"a":[{"b":1e100000}]}`, false},
		{`"1e100000"`, true},                       // a string renders as sent
		{`1` + strings.Repeat("0", 200000), false}, // beyond numeric's 131072 digits
	} {
		body := `{"input":` + tc.input + `}`
		p := Scan([]byte(body), sc, &lim)
		if (p == nil) != tc.ok {
			t.Errorf("%.60s: problem %+v, want ok=%v", tc.input, p, tc.ok)
		}
		if p != nil && (p.Status != http.StatusBadRequest || !strings.HasPrefix(p.Field, "input")) {
			t.Errorf("%.60s: problem %+v", tc.input, p)
		}
	}
}

// FuzzStrictScan feeds the scan arbitrary bytes: it never panics, and a
// problem it finds always names a field.
func FuzzStrictScan(f *testing.F) {
	for _, s := range []string{`{}`, `{"commands":[{"type":"x","input":[1,2,{"a":null}]}]}`, `{"a":`, `[`,
		`{"commands":[{"result":1e99999}]}`, `{"commands":[{"TYPE":1}]}`, `"\u00`, `{"x":"\\"}`, `-`, `1e`, `1.`,
		`{"eager_activities":{"task_queues":["a"],"max":1}}`} {
		f.Add([]byte(s))
	}
	var cache SchemaCache
	sc := cache.Of(reflect.TypeOf(&api.CompleteWorkflowTaskRequest{}))
	lim := Limits{}.WithDefaults(4 << 20)
	f.Fuzz(func(t *testing.T, body []byte) {
		p := Scan(body, sc, &lim)
		if p != nil && p.Field == "" {
			t.Fatalf("problem without a field: %+v", p)
		}
	})
}
