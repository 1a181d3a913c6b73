// Package client talks to a Tether server over its HTTP/JSON API: start
// workflows, wait for their results, describe, list, cancel, signal and
// delete them.
//
// [Client] is Temporal's client.Client interface ([Dial], [NewLazyClient]);
// [*TetherClient] implements it and adds Tether's own calls ([New],
// [DialContext]). A client is safe for concurrent use; create one per
// process and share it (package worker takes one too). The worker side of
// the protocol (polling and acknowledging tasks, worker sessions) is not
// here: package worker drives it.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/internal/metrics"
	"github.com/tetherhq/tether/sdk/internal/payloadwire"
	"github.com/tetherhq/tether/sdk/internal/protocol"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/log"
)

// DefaultNamespace is the namespace used when Options.Namespace is empty.
const DefaultNamespace = "default"

// DefaultHostPort is the server address used when Options.Address and
// Options.HostPort are empty: where `tether dev` listens.
const DefaultHostPort = "localhost:7070"

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 1 << 20

// Options configure a Client.
type Options struct {
	// Address is the server's base URL, such as "http://localhost:7070".
	// A bare "host:port" is taken as http.
	Address string
	// HostPort is Temporal's name of Address, used when Address is empty;
	// both empty: DefaultHostPort.
	HostPort string
	// Identity names this client (Temporal's Options.Identity); workers
	// built on the client take it as their default identity.
	Identity string
	// Namespace defaults to "default".
	Namespace string
	// DataConverter converts the payloads the client and its workers send
	// and read (Temporal's Options.DataConverter), typically
	// converter.NewCodecDataConverter(converter.GetDefaultDataConverter(),
	// codec) to encrypt or compress them. Nil or the default: payloads
	// travel as plain JSON. See package converter for the wire form.
	DataConverter converter.DataConverter
	// ExternalStorage stores large payloads outside the server (Temporal's
	// Options.ExternalStorage): a payload larger than its threshold, as
	// DataConverter and its codecs made it, goes to a StorageDriver and a
	// reference travels and is stored in its place; the client and its
	// workers retrieve it when they read the reference. Zero: none.
	ExternalStorage converter.ExternalStorage
	// HTTPClient defaults to a client without a global timeout (long polls
	// are bounded by their wait parameter and by the request's context)
	// that keeps up to 64 idle connections to the server.
	HTTPClient *http.Client
	// Logger defaults to slog.Default(). A *slog.Logger is a log.Logger;
	// so is Temporal's log.NewStructuredLogger and any adapter written for
	// Temporal (package sdk/log).
	Logger log.Logger
	// APIKey is sent as "Authorization: Bearer <key>" on every request.
	// Empty: the environment variable TETHER_API_KEY, if set.
	APIKey string
	// TLSConfig configures TLS to an https Address (for example RootCAs to
	// trust a private CA). Only with the default HTTPClient.
	TLSConfig *tls.Config
	// ConnectionOptions is Temporal's: its TLS is TLSConfig's other name.
	ConnectionOptions ConnectionOptions
	// Credentials are Temporal's: NewAPIKeyStaticCredentials sets APIKey,
	// NewMTLSCredentials a client certificate.
	Credentials Credentials
	// HeadersProvider, when set, supplies headers for every request
	// (Temporal's Options.HeadersProvider; headers.go).
	HeadersProvider HeadersProvider
	// CAFile is a PEM file of the CA certificates to trust for an https
	// Address, instead of the system's (added to TLSConfig when both are
	// set). Only with the default HTTPClient.
	CAFile string
	// MetricsHandler receives the client's and its workers' metrics
	// (Temporal's Options.MetricsHandler): request counts, failures and
	// latencies, workflow and activity outcomes and latencies. Nil: none
	// (MetricsNopHandler). sdk/contrib/opentelemetry.NewMetricsHandler
	// makes one of an OpenTelemetry meter.
	MetricsHandler MetricsHandler
	// RequestHook, when set, is called with every HTTP request the client
	// and its workers send, after the client set its headers and before
	// the request goes: it may add headers of its own. The request's
	// context is the caller's (an activity's report carries the activity's
	// context), so sdk/contrib/opentelemetry.InjectTraceContext, set here,
	// sends the W3C traceparent of the span in it and the server's spans
	// join the caller's trace.
	RequestHook func(*http.Request)
	// Interceptors wrap the client's calls to workflows (Temporal's
	// Options.Interceptors; package interceptor); the first of the slice
	// is called first. Those that are also interceptor.WorkerInterceptor
	// intercept the workers built on the client too.
	Interceptors []ClientInterceptor
	// ContextPropagators carry values of the caller's context to the
	// workflows it starts, signals, queries and updates, and on to their
	// activities and child workflows (Temporal's
	// Options.ContextPropagators; workflow.ContextPropagator). The workers
	// built on the client use them too.
	ContextPropagators []wf.ContextPropagator
}

// TetherClient is the client of a Tether server, bound to one namespace:
// Temporal's Client interface and Tether's own calls.
type TetherClient struct {
	base   *url.URL
	ns     string
	hc     *http.Client
	logger *slog.Logger
	// idPrefix and ids make the X-Request-ID of each request: a random
	// prefix drawn once per client and a counter.
	idPrefix string
	ids      atomic.Uint64
	// apiKey is sent as a bearer token on every request ("" when none).
	apiKey string
	// headers is Options.HeadersProvider (nil: none).
	headers HeadersProvider
	// identity is Options.Identity.
	identity string
	// proto is the worker protocol over this client's HTTP core (package
	// worker reaches it through protocol.Of).
	proto *protocol.Conn
	// dc is Options.DataConverter, nil for the default converter (then
	// bodies are sent and read as they are).
	dc converter.DataConverter
	// metrics are the request metrics (nil without a MetricsHandler);
	// hook is Options.RequestHook.
	metrics *requestMetrics
	hook    func(*http.Request)
	// interceptors and propagators are Options.Interceptors and
	// Options.ContextPropagators; out is the outbound chain the
	// interceptors built (nil without interceptors).
	interceptors []ClientInterceptor
	propagators  []wf.ContextPropagator
	out          ClientOutboundInterceptor
}

// Interceptors returns Options.Interceptors (package worker takes those
// that are also worker interceptors).
func (c *TetherClient) Interceptors() []ClientInterceptor { return c.interceptors }

// ContextPropagators returns Options.ContextPropagators (package worker
// uses them too).
func (c *TetherClient) ContextPropagators() []wf.ContextPropagator { return c.propagators }

func init() {
	protocol.Register(func(c any) *protocol.Conn {
		if cl, ok := c.(*TetherClient); ok && cl != nil {
			return cl.proto
		}
		return nil
	})
}

// waitPtr returns d as the wait field of a request.
func waitPtr(d time.Duration) *api.Duration { return protocol.WaitPtr(d) }

// RequestIDHeader is the header that names a request; the client sends one
// with every request, the server logs it and echoes it, and errors carry it
// ([ProblemError.RequestID], [TransportError.RequestID]).
const RequestIDHeader = "X-Request-Id"

// nextRequestID returns the id of a new request.
func (c *TetherClient) nextRequestID() string {
	return c.idPrefix + strconv.FormatUint(c.ids.Add(1), 36)
}

// DialContext returns a client for the server at opts.Address. It checks
// that the server answers (GET /healthz) within ctx; any HTTP answer counts
// as reachable. Dial is Temporal's form, without a context.
func DialContext(ctx context.Context, opts Options) (*TetherClient, error) {
	c, err := New(opts)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base.JoinPath("healthz").String(), nil)
	if err != nil {
		return nil, fmt.Errorf("tether: dial %s: %w", c.base, err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("tether: dial %s: %w", c.base, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	return c, nil
}

// New returns a client without contacting the server.
func New(opts Options) (*TetherClient, error) {
	addr := strings.TrimSpace(opts.Address)
	if addr == "" {
		addr = strings.TrimSpace(opts.HostPort)
	}
	if addr == "" {
		addr = DefaultHostPort
	}
	usesTLS, err := applyTemporalOptions(&opts)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(addr, "://") {
		if usesTLS {
			addr = "https://" + addr
		} else {
			addr = "http://" + addr
		}
	}
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("tether: invalid address %q: %w", opts.Address, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("tether: invalid address %q: scheme must be http or https", opts.Address)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	tc, err := tlsConfig(opts)
	if err != nil {
		return nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	c := &TetherClient{base: u, ns: opts.Namespace, hc: opts.HTTPClient, logger: log.ToSlog(opts.Logger), apiKey: opts.APIKey, identity: opts.Identity,
		idPrefix: "c" + hex.EncodeToString(b[:]) + "-"}
	if c.apiKey == "" {
		c.apiKey = os.Getenv(EnvAPIKey)
	}
	c.headers = opts.HeadersProvider
	if c.ns == "" {
		c.ns = DefaultNamespace
	}
	if c.hc == nil {
		// A worker keeps many requests to one server in flight (long polls,
		// acks, heartbeats): keep that many idle connections instead of
		// net/http's default of two per host, which churns connections.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = 256
		t.MaxIdleConnsPerHost = 64
		if tc != nil {
			t.TLSClientConfig = tc
		}
		c.hc = &http.Client{Transport: t}
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if !converter.IsDefault(opts.DataConverter) {
		c.dc = opts.DataConverter
	}
	if len(opts.ExternalStorage.Drivers) > 0 || opts.ExternalStorage.DriverSelector != nil {
		dc, err := converter.NewExternalStorageDataConverter(opts.DataConverter, opts.ExternalStorage)
		if err != nil {
			return nil, fmt.Errorf("tether: ExternalStorage: %w", err)
		}
		c.dc = dc
	}
	c.interceptors, c.propagators = opts.Interceptors, opts.ContextPropagators
	c.buildInterceptors()
	c.proto = protocol.New(c.do, func(err error) error { return refine(err, ErrLockLost) })
	c.hook = opts.RequestHook
	if c.hook != nil {
		c.proto.SetHooked()
	}
	if !metrics.IsNop(opts.MetricsHandler) {
		h := opts.MetricsHandler.WithTags(map[string]string{metrics.TagNamespace: c.ns, metrics.TagClient: metrics.ClientName})
		c.metrics = &requestMetrics{h: h}
		c.proto.SetMetrics(h)
	}
	return c, nil
}

// Namespace returns the client's namespace.
func (c *TetherClient) Namespace() string { return c.ns }

// Address returns the server's base URL.
func (c *TetherClient) Address() string { return c.base.String() }

// Identity returns Options.Identity.
func (c *TetherClient) Identity() string { return c.identity }

// Logger returns the client's logger.
func (c *TetherClient) Logger() *slog.Logger { return c.logger }

// path builds a namespaced URL from escaped path segments and a query.
func (c *TetherClient) url(query url.Values, segs ...string) string {
	parts := append([]string{"v1", "namespaces", c.ns}, segs...)
	u := c.base.JoinPath(parts...)
	if len(query) > 0 {
		u.RawQuery = query.Encode()
	}
	return u.String()
}

// do sends a JSON request and decodes a JSON answer into out (when out is
// not nil and the answer has a body). It returns the HTTP status. Statuses
// >= 400 become a *ProblemError.
func (c *TetherClient) do(ctx context.Context, method, op string, query url.Values, body, out any, segs ...string) (int, error) {
	return c.doURL(ctx, method, op, c.url(query, segs...), body, out)
}

// doURL is do on a complete URL (the routes outside a namespace).
func (c *TetherClient) doURL(ctx context.Context, method, op, target string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, fmt.Errorf("tether: %s: encode request: %w", op, err)
		}
		if c.dc != nil {
			if b, err = payloadwire.Encode(c.dc, b); err != nil {
				return 0, fmt.Errorf("tether: %s: %w", op, err)
			}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return 0, fmt.Errorf("tether: %s: %w", op, err)
	}
	id := c.nextRequestID()
	req.Header.Set("Accept", "application/json")
	req.Header.Set(RequestIDHeader, id)
	c.authHeaders(req)
	if err := c.providedHeaders(req); err != nil {
		return 0, fmt.Errorf("tether: %s: %w", op, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.hook != nil {
		c.hook(req)
	}
	var start time.Time
	if c.metrics != nil {
		start = time.Now()
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if c.metrics != nil {
			c.metrics.record(op, start, 0, true)
		}
		return 0, &TransportError{Op: op, RequestID: id, Err: err}
	}
	defer resp.Body.Close()
	if c.metrics != nil {
		c.metrics.record(op, start, resp.StatusCode, resp.StatusCode >= 400)
	}
	if resp.StatusCode >= 400 {
		return resp.StatusCode, decodeProblem(resp, op, id)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return resp.StatusCode, nil
	}
	if c.dc != nil {
		return c.decodeConverted(resp, op, out)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		if errors.Is(err, io.EOF) {
			return resp.StatusCode, nil
		}
		return resp.StatusCode, fmt.Errorf("tether: %s: decode answer: %w", op, err)
	}
	return resp.StatusCode, nil
}

// decodeConverted decodes an answer through the client's data converter.
// A payload the converter fails on leaves the rest of out decoded and
// returns the *converter.PayloadCodecError, so that the worker protocol
// can fail the task it belongs to.
func (c *TetherClient) decodeConverted(resp *http.Response, op string, out any) (int, error) {
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, &TransportError{Op: op, RequestID: resp.Header.Get(RequestIDHeader), Err: err}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return resp.StatusCode, nil
	}
	b, perr := payloadwire.Decode(c.dc, b)
	if err := json.Unmarshal(b, out); err != nil {
		return resp.StatusCode, fmt.Errorf("tether: %s: decode answer: %w", op, err)
	}
	if perr != nil {
		return resp.StatusCode, fmt.Errorf("tether: %s: %w", op, perr)
	}
	return resp.StatusCode, nil
}

func decodeProblem(resp *http.Response, op, sentID string) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	id := resp.Header.Get(RequestIDHeader)
	if id == "" {
		id = sentID
	}
	pe := &ProblemError{Status: resp.StatusCode, Op: op,
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), RequestID: id}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if (ct == "application/problem+json" || ct == "application/json") && json.Unmarshal(b, &pe.Problem) == nil && (pe.Problem.Title != "" || pe.Problem.Detail != "" || pe.Problem.Status != 0) {
		if pe.Problem.Status == 0 {
			pe.Problem.Status = resp.StatusCode
		}
		pe.sentinel = sentinelFor(resp.StatusCode, pe.Problem.Type)
		return pe
	}
	pe.Problem = api.Problem{Title: http.StatusText(resp.StatusCode), Status: resp.StatusCode, Detail: strings.TrimSpace(string(b))}
	pe.sentinel = sentinelFor(resp.StatusCode, "")
	return pe
}
