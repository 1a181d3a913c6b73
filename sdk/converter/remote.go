package converter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tetherhq/tether/sdk/common"
)

// RemotePayloadCodecOptions configure NewRemotePayloadCodec (Temporal's).
type RemotePayloadCodecOptions struct {
	// Endpoint is the codec server's base URL; the codec POSTs to
	// Endpoint+"/encode" and Endpoint+"/decode".
	Endpoint string
	// ModifyRequest, when set, adjusts each request (authentication
	// headers, …); its error fails the call.
	ModifyRequest func(*http.Request) error
	// Client sends the requests (the zero value is a plain http.Client).
	Client http.Client
}

type remoteCodec struct{ opts RemotePayloadCodecOptions }

// NewRemotePayloadCodec returns a codec that encodes and decodes through a
// codec server (NewPayloadCodecHTTPHandler, or any server of Temporal's
// codec protocol).
func NewRemotePayloadCodec(options RemotePayloadCodecOptions) PayloadCodec {
	options.Endpoint = strings.TrimSuffix(options.Endpoint, "/")
	return &remoteCodec{opts: options}
}

func (r *remoteCodec) Encode(payloads []*common.Payload) ([]*common.Payload, error) {
	return r.call("/encode", payloads)
}

func (r *remoteCodec) Decode(payloads []*common.Payload) ([]*common.Payload, error) {
	return r.call("/decode", payloads)
}

func (r *remoteCodec) call(path string, payloads []*common.Payload) ([]*common.Payload, error) {
	body := codecBody{Payloads: make([]wirePayload, len(payloads))}
	for i, p := range payloads {
		body.Payloads[i] = wirePayload{Metadata: p.GetMetadata(), Data: p.GetData()}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("codec server: %w", err)
	}
	url := r.opts.Endpoint + path
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("codec server %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.opts.ModifyRequest != nil {
		if err := r.opts.ModifyRequest(req); err != nil {
			return nil, fmt.Errorf("codec server %s: modify request: %w", url, err)
		}
	}
	resp, err := r.opts.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("codec server: %w", err)
	}
	defer resp.Body.Close()
	ans, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("codec server %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("codec server %s: %s: %s", url, resp.Status, strings.TrimSpace(string(ans)))
	}
	var out codecBody
	if err := json.Unmarshal(ans, &out); err != nil {
		return nil, fmt.Errorf("codec server %s: read answer: %w", url, err)
	}
	if len(out.Payloads) != len(payloads) {
		return nil, fmt.Errorf("codec server %s: %d payloads answered for %d", url, len(out.Payloads), len(payloads))
	}
	ps := make([]*common.Payload, len(out.Payloads))
	for i, p := range out.Payloads {
		ps[i] = &common.Payload{Metadata: p.Metadata, Data: p.Data}
	}
	return ps, nil
}
