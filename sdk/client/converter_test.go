package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/converter"
)

// echoServer answers every request with answer and keeps the last body.
func echoServer(t testing.TB, answer string) (*httptest.Server, func() []byte) {
	var mu sync.Mutex
	var last []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = b
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []byte {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

const startAnswer = `{"instance_id":"w","status":"completed","result":{"total":3}}`

func startRequest() api.StartWorkflowRequest {
	return api.StartWorkflowRequest{WorkflowType: "W", TaskQueue: "q", Input: json.RawMessage(`{"items":[1,2]}`)}
}

func TestDefaultConverterLeavesBodiesAsTheyAre(t *testing.T) {
	srv, last := echoServer(t, startAnswer)
	plain, err := New(Options{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	dflt, err := New(Options{Address: srv.URL, DataConverter: converter.GetDefaultDataConverter()})
	if err != nil {
		t.Fatal(err)
	}
	if dflt.dc != nil {
		t.Fatal("the default converter is applied to bodies")
	}
	var outPlain, outDefault api.Workflow
	if _, err := plain.do(context.Background(), http.MethodPost, "op", nil, startRequest(), &outPlain, "workflows"); err != nil {
		t.Fatal(err)
	}
	sentPlain := last()
	if _, err := dflt.do(context.Background(), http.MethodPost, "op", nil, startRequest(), &outDefault, "workflows"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(last(), sentPlain) || string(outDefault.Result) != `{"total":3}` || string(outPlain.Result) != string(outDefault.Result) {
		t.Fatalf("default converter sent %s (want %s), read %s", last(), sentPlain, outDefault.Result)
	}

	// A codec converter sends an envelope and reads its own envelopes.
	zdc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), converter.NewZlibCodec(converter.ZlibCodecOptions{AlwaysEncode: true}))
	zc, err := New(Options{Address: srv.URL, DataConverter: zdc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zc.do(context.Background(), http.MethodPost, "op", nil, startRequest(), nil, "workflows"); err != nil {
		t.Fatal(err)
	}
	var sent api.StartWorkflowRequest
	if err := json.Unmarshal(last(), &sent); err != nil || !bytes.Contains(sent.Input, []byte(converter.EnvelopeKey)) || sent.WorkflowType != "W" {
		t.Fatalf("codec converter sent %s, %v", last(), err)
	}
	srv2, _ := echoServer(t, `{"instance_id":"w","result":`+string(sent.Input)+`}`)
	zc2, _ := New(Options{Address: srv2.URL, DataConverter: zdc})
	var out api.Workflow
	if _, err := zc2.do(context.Background(), http.MethodGet, "op", nil, nil, &out, "workflows", "w"); err != nil || string(out.Result) != `{"items":[1,2]}` {
		t.Fatalf("codec converter read %s, %v", out.Result, err)
	}
}

// BenchmarkDoPayloads measures one request and answer with payloads
// through the HTTP core: with no converter, with the default one (which
// must cost nothing more), and with a codec.
func BenchmarkDoPayloads(b *testing.B) {
	srv, _ := echoServer(b, startAnswer)
	for _, c := range []struct {
		name string
		dc   converter.DataConverter
	}{
		{"none", nil},
		{"default", converter.GetDefaultDataConverter()},
		{"zlib", converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), converter.NewZlibCodec(converter.ZlibCodecOptions{AlwaysEncode: true}))},
	} {
		b.Run(c.name, func(b *testing.B) {
			cl, err := New(Options{Address: srv.URL, DataConverter: c.dc})
			if err != nil {
				b.Fatal(err)
			}
			req := startRequest()
			b.ReportAllocs()
			for b.Loop() {
				var out api.Workflow
				if _, err := cl.do(context.Background(), http.MethodPost, "op", nil, req, &out, "workflows"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
