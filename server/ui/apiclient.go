package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/tetherhq/tether/api"
)

// maxAnswer bounds how much of an API answer the UI reads.
const maxAnswer = 32 << 20

// InProcess returns an HTTP client whose requests are served by h in this
// process, without a network round trip: the UI's way to call the server's
// own public API (its routes, middleware and checks, as any client sees
// them).
func InProcess(h http.Handler) *http.Client {
	return &http.Client{Transport: handlerTransport{h: h}}
}

// handlerTransport is an http.RoundTripper that serves each request with a
// handler and records its answer.
type handlerTransport struct{ h http.Handler }

// RoundTrip serves req with the handler.
func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	in := req.Clone(req.Context())
	if in.Body == nil {
		in.Body = http.NoBody
	}
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "127.0.0.1:0"
	rec := &recorder{header: http.Header{}}
	t.h.ServeHTTP(rec, in)
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", rec.code, http.StatusText(rec.code)),
		StatusCode:    rec.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.header,
		Body:          io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		ContentLength: int64(rec.body.Len()),
		Request:       req,
	}, nil
}

// recorder is the http.ResponseWriter of handlerTransport.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.body.Write(p)
}

// Flush does nothing: the answer is delivered whole.
func (r *recorder) Flush() {}

// apiError is an error answer of the API, usually a problem document.
type apiError struct {
	Status  int
	Problem api.Problem
}

func (e *apiError) Error() string {
	var b strings.Builder
	title := e.Problem.Title
	if title == "" {
		title = http.StatusText(e.Status)
	}
	fmt.Fprintf(&b, "%d %s", e.Status, title)
	if e.Problem.Detail != "" {
		b.WriteString(": " + e.Problem.Detail)
	}
	for i, f := range e.Problem.Errors {
		sep := "; "
		if i == 0 {
			sep = " — "
		}
		fmt.Fprintf(&b, "%s%s: %s", sep, f.Field, f.Message)
	}
	return b.String()
}

// apiClient calls the public API on behalf of one browser request: it
// forwards that request's credentials.
type apiClient struct {
	hc   *http.Client
	base string
	// auth is the Authorization header to send ("" for none).
	auth string
	// requestID is the X-Request-Id to send ("" for none).
	requestID string
}

// path joins escaped path segments under /v1/namespaces/{ns}.
func nsPath(ns string, segs ...string) string {
	var b strings.Builder
	b.WriteString("/v1/namespaces/")
	b.WriteString(url.PathEscape(ns))
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// do sends a request to path (with query) and decodes a 2xx answer's JSON
// body into out (when out is not nil and there is a body). Any other
// answer is an *apiError.
func (c *apiClient) do(ctx context.Context, method, path string, query url.Values, body, out any) (int, error) {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, fmt.Errorf("encode the request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, fmt.Errorf("build the request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	if c.requestID != "" {
		req.Header.Set("X-Request-Id", c.requestID)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &apiError{Status: resp.StatusCode}
		if json.Unmarshal(data, &e.Problem) != nil || e.Problem.Title == "" {
			e.Problem.Detail = strings.TrimSpace(string(data))
			if len(e.Problem.Detail) > 500 {
				e.Problem.Detail = e.Problem.Detail[:500] + "…"
			}
		}
		return resp.StatusCode, e
	}
	if out != nil && len(data) > 0 && resp.StatusCode != http.StatusNoContent {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}
