// Package ui is Tether's web UI, served by the server under /ui: pages that
// list and inspect workflows (with their history, pending activities and
// signals), send signals and cancel requests, show workers and task
// queues, and list and inspect schedules (next runs, recent actions) with
// their pause, unpause and trigger forms.
//
// The UI renders HTML on the server with html/template and works without
// JavaScript. One script of its own (static/ui.js, allowed by the
// Content-Security-Policy as 'self') adds what needs the browser: the pages
// of running workflows and the list refresh their live parts while the
// auto-refresh toggle is on, and payloads a codec encoded are decoded by
// the codec server of Config.CodecEndpoint (or the one a browser chose on
// the settings page), called by the browser.
//
// The UI reads and changes nothing but through the public REST API (an
// http.Client, normally InProcess over the server's own handler), and
// forwards the browser's credentials with every call — its Authorization
// header, or the API key saved by the login page in a cookie — so that the
// API's access rules apply to the UI's users as to any client.
//
// Forms that change something are POSTs protected against cross-site
// requests: they carry a token that must match the browser's CSRF cookie
// (SameSite=Strict, HttpOnly), and a request whose Origin is another site
// is refused.
package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Prefix is the path the UI is served under.
const Prefix = "/ui"

// Cookie names.
const (
	// csrfCookie holds the browser's CSRF token.
	csrfCookie = "tether_ui_csrf"
	// keyCookie holds the API key given on the login page.
	keyCookie = "tether_ui_key"
	// codecCookie holds the codec endpoint chosen on the settings page,
	// which replaces Config.CodecEndpoint for that browser.
	codecCookie = "tether_ui_codec"
)

// baseCSP is the Content-Security-Policy of every page, before the codec
// server's connect-src.
const baseCSP = "default-src 'self'; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'"

//go:embed templates/*.html static/*
var files embed.FS

// Config configures a UI.
type Config struct {
	// Client calls the public API. Required; normally InProcess over the
	// server's own handler.
	Client *http.Client
	// BaseURL is the API's base URL, without a trailing slash (default
	// "http://tether.internal", enough for an InProcess client).
	BaseURL string
	// Namespace is the namespace shown first. Default "default".
	Namespace string
	// PageSize is how many workflows a list page asks for when the URL
	// does not say. Default 50.
	PageSize int
	// Now is the clock relative times are computed with. Default time.Now.
	Now func() time.Time
	// Logger receives the UI's failures. Default: discarded.
	Logger *slog.Logger
	// CodecEndpoint is the base URL of a codec server (Temporal's codec
	// protocol, such as sdk/converter.NewPayloadCodecHTTPHandler): the
	// browser POSTs the payloads a codec encoded to its /decode and shows
	// them decoded. The server itself never decodes them. "" (the
	// default): payloads are shown as stored. A URL that is not http or
	// https is ignored (and logged).
	CodecEndpoint string
	// RefreshInterval is how often a page of a running workflow reloads
	// its live parts in the browser (the list: twice as long). Default 2s.
	RefreshInterval time.Duration
}

// UI is the web UI's HTTP handler; its paths start with Prefix.
type UI struct {
	cfg    Config
	mux    *http.ServeMux
	pages  map[string]*template.Template
	static http.Handler
}

// codecFor returns the codec endpoint of r's pages: the browser's own
// (the settings page's cookie) when it chose one, else
// Config.CodecEndpoint ("" for none).
func (u *UI) codecFor(r *http.Request) string {
	if c, err := r.Cookie(codecCookie); err == nil && c.Value != "" {
		if _, err := codecOrigin(c.Value); err == nil {
			return c.Value
		}
	}
	return u.cfg.CodecEndpoint
}

// csp is the Content-Security-Policy of r's answer: the browser may call
// the codec server of its pages, and nothing else outside this origin.
func (u *UI) csp(r *http.Request) string {
	if e := u.codecFor(r); e != "" {
		if origin, err := codecOrigin(e); err == nil {
			return baseCSP + "; connect-src 'self' " + origin
		}
	}
	return baseCSP
}

// codecOrigin checks that endpoint is an http or https URL and returns its
// origin (scheme://host[:port]), for the Content-Security-Policy.
func codecOrigin(endpoint string) (string, error) {
	p, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("codec endpoint: %w", err)
	}
	if (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil {
		return "", fmt.Errorf("codec endpoint %q: want an http or https URL without credentials", endpoint)
	}
	return p.Scheme + "://" + p.Host, nil
}

// CheckCodecEndpoint reports whether endpoint may be a Config.CodecEndpoint
// (an http or https URL without user information).
func CheckCodecEndpoint(endpoint string) error {
	_, err := codecOrigin(endpoint)
	return err
}

// New returns the UI of cfg.
func New(cfg Config) *UI {
	if cfg.Client == nil {
		panic("ui: Config.Client is required")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://tether.internal"
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 50
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = 2 * time.Second
	}
	if cfg.CodecEndpoint != "" {
		if _, err := codecOrigin(cfg.CodecEndpoint); err != nil {
			cfg.Logger.Error("ui: the codec endpoint is ignored", "endpoint", cfg.CodecEndpoint, "err", err)
			cfg.CodecEndpoint = ""
		}
		cfg.CodecEndpoint = strings.TrimRight(cfg.CodecEndpoint, "/")
	}
	u := &UI{cfg: cfg, mux: http.NewServeMux(), pages: map[string]*template.Template{}}
	for _, p := range []string{"workflows", "workflow", "workers", "queues", "queue", "schedules", "schedule", "batches", "batch", "login", "settings", "error"} {
		u.pages[p] = template.Must(template.New("layout.html").Funcs(funcs(cfg.Now)).
			ParseFS(files, "templates/layout.html", "templates/"+p+".html"))
	}
	static, err := fs.Sub(files, "static")
	if err != nil {
		panic(err)
	}
	u.static = http.StripPrefix(Prefix+"/static/", http.FileServerFS(static))

	m := u.mux
	m.HandleFunc("GET "+Prefix+"/{$}", u.home)
	m.HandleFunc("GET "+Prefix, u.home)
	m.Handle("GET "+Prefix+"/static/", u.static)
	m.HandleFunc("GET "+Prefix+"/login", u.loginPage)
	m.HandleFunc("POST "+Prefix+"/login", u.login)
	m.HandleFunc("POST "+Prefix+"/logout", u.logout)
	m.HandleFunc("GET "+Prefix+"/settings", u.settingsPage)
	m.HandleFunc("POST "+Prefix+"/settings", u.saveSettings)
	ns := Prefix + "/namespaces/{ns}"
	m.HandleFunc("GET "+ns+"/{$}", u.nsHome)
	m.HandleFunc("GET "+ns+"/workflows", u.listWorkflows)
	m.HandleFunc("GET "+ns+"/workflows/{id}", u.workflow)
	m.HandleFunc("POST "+ns+"/workflows/{id}/signal", u.signal)
	m.HandleFunc("POST "+ns+"/workflows/{id}/cancel", u.cancel)
	m.HandleFunc("POST "+ns+"/workflows/{id}/terminate", u.terminate)
	m.HandleFunc("POST "+ns+"/workflows/{id}/reset", u.reset)
	m.HandleFunc("GET "+ns+"/workers", u.workers)
	m.HandleFunc("GET "+ns+"/task-queues", u.queues)
	m.HandleFunc("GET "+ns+"/task-queues/{name}", u.queue)
	u.scheduleRoutes(m, ns)
	u.batchRoutes(m, ns)
	return u
}

// ServeHTTP serves the UI's pages.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", u.csp(r))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	if r.Method == http.MethodPost {
		if err := u.checkCSRF(r); err != nil {
			u.render(w, r, http.StatusForbidden, "error", &page{Title: "Forbidden", Error: err.Error()})
			return
		}
	}
	u.mux.ServeHTTP(w, r)
}

// csrfError is a refused cross-site request.
type csrfError string

func (e csrfError) Error() string { return string(e) }

// checkCSRF refuses a POST from another origin, or without the token of
// the browser's CSRF cookie.
func (u *UI) checkCSRF(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		ou, err := url.Parse(o)
		if err != nil || ou.Host != r.Host {
			return csrfError("The request came from another site (Origin " + o + ").")
		}
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return csrfError("The request came from another site.")
	}
	c, err := r.Cookie(csrfCookie)
	if err != nil || c.Value == "" {
		return csrfError("The form has no valid CSRF token: reload the page and try again.")
	}
	if err := r.ParseForm(); err != nil {
		return csrfError("The form could not be read.")
	}
	if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(c.Value)) != 1 {
		return csrfError("The form's CSRF token does not match: reload the page and try again.")
	}
	return nil
}

// csrfToken returns the browser's CSRF token, setting a new cookie when it
// has none.
func csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 32 {
		return c.Value
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails
	tok := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{
		Name: csrfCookie, Value: tok, Path: Prefix, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	return tok
}

// client returns an API client that forwards r's credentials: its
// Authorization header, else the API key of the login cookie. Its calls
// carry the request id of the page (the X-Request-Id the server's
// middleware set on w), so that the logs tie them to it.
func (u *UI) client(w http.ResponseWriter, r *http.Request) *apiClient {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		if c, err := r.Cookie(keyCookie); err == nil && c.Value != "" {
			auth = "Bearer " + c.Value
		}
	}
	id := w.Header().Get("X-Request-Id")
	if id == "" {
		id = r.Header.Get("X-Request-Id")
	}
	return &apiClient{hc: u.cfg.Client, base: u.cfg.BaseURL, auth: auth, requestID: id}
}

// loggedIn reports whether r carries an API key cookie.
func loggedIn(r *http.Request) bool {
	c, err := r.Cookie(keyCookie)
	return err == nil && c.Value != ""
}

// page is what every template gets.
type page struct {
	// Title is the page's title.
	Title string
	// Nav names the navigation entry of the page.
	Nav string
	// NS is the namespace shown.
	NS string
	// CSRF is the token forms carry.
	CSRF string
	// LoggedIn is true when an API key cookie is set.
	LoggedIn bool
	// Flash is a message about the last action.
	Flash string
	// Error is an error to show instead of (or above) the content.
	Error string
	// NeedsKey is set when the API refused the credentials (401, 403):
	// the page offers the API key form.
	NeedsKey bool
	// Data is the page's own content.
	Data any
	// Refresh, when not zero, is how often (in milliseconds) the browser
	// reloads the page's live parts (elements with data-live) while the
	// auto-refresh toggle is on (static/ui.js).
	Refresh int64
	// CodecEndpoint is Config.CodecEndpoint: the page's payloads are
	// decoded through it by the browser.
	CodecEndpoint string
}

// render writes the page tmpl with status.
func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, tmpl string, p *page) {
	if p.NS == "" {
		p.NS = r.PathValue("ns")
	}
	if p.NS == "" {
		p.NS = u.cfg.Namespace
	}
	p.CSRF = csrfToken(w, r)
	p.CodecEndpoint = u.codecFor(r)
	p.LoggedIn = loggedIn(r)
	if p.Flash == "" {
		p.Flash = r.URL.Query().Get("flash")
	}
	var buf strings.Builder
	if err := u.pages[tmpl].Execute(&buf, p); err != nil {
		u.cfg.Logger.Error("ui: render", "page", tmpl, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(buf.String()))
}

// fail renders an error page for an API error.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, title string, err error) {
	status := statusOf(err)
	if status == http.StatusBadGateway {
		u.cfg.Logger.Error("ui: API call failed", "path", r.URL.Path, "err", err)
	}
	u.render(w, r, status, "error", &page{Title: title, Error: err.Error(), NeedsKey: needsKey(err)})
}

// needsKey reports whether err is the API refusing the credentials.
func needsKey(err error) bool {
	s := statusOf(err)
	return s == http.StatusUnauthorized || s == http.StatusForbidden
}

// home sends the browser to the workflows of the namespace of the query's
// ns (the namespace form) or of the default one.
func (u *UI) home(w http.ResponseWriter, r *http.Request) {
	ns := strings.TrimSpace(r.URL.Query().Get("ns"))
	if ns == "" {
		ns = u.cfg.Namespace
	}
	target := nsURL(ns, "workflows")
	if f := r.URL.Query().Get("flash"); f != "" {
		target += "?flash=" + url.QueryEscape(f)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func (u *UI) nsHome(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, nsURL(r.PathValue("ns"), "workflows"), http.StatusSeeOther)
}

func (u *UI) loginPage(w http.ResponseWriter, r *http.Request) {
	u.render(w, r, http.StatusOK, "login", &page{Title: "API key", Nav: "login"})
}

func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSpace(r.PostFormValue("api_key"))
	if key == "" {
		u.render(w, r, http.StatusBadRequest, "login", &page{Title: "API key", Nav: "login", Error: "api_key: is required"})
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: keyCookie, Value: key, Path: Prefix, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	http.Redirect(w, r, Prefix+"/?flash="+url.QueryEscape("API key saved."), http.StatusSeeOther)
}

func (u *UI) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: keyCookie, Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, Prefix+"/login?flash="+url.QueryEscape("API key forgotten."), http.StatusSeeOther)
}

// settingsData is the content of the settings page.
type settingsData struct {
	// Codec is the browser's own codec endpoint ("" when it uses the
	// server's); ServerCodec is Config.CodecEndpoint.
	Codec, ServerCodec string
}

func (u *UI) settingsPage(w http.ResponseWriter, r *http.Request) {
	d := &settingsData{ServerCodec: u.cfg.CodecEndpoint}
	if c, err := r.Cookie(codecCookie); err == nil {
		d.Codec = c.Value
	}
	u.render(w, r, http.StatusOK, "settings", &page{Title: "Settings", Nav: "settings", Data: d})
}

// saveSettings keeps the browser's codec endpoint in a cookie, or forgets
// it (action "clear"): the browser then uses the server's.
func (u *UI) saveSettings(w http.ResponseWriter, r *http.Request) {
	endpoint := strings.TrimRight(strings.TrimSpace(r.PostFormValue("codec_endpoint")), "/")
	if r.PostFormValue("action") == "clear" || endpoint == "" {
		http.SetCookie(w, &http.Cookie{Name: codecCookie, Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true,
			SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, Prefix+"/settings?flash="+url.QueryEscape("This browser uses the server's codec endpoint."), http.StatusSeeOther)
		return
	}
	if _, err := codecOrigin(endpoint); err != nil {
		u.render(w, r, http.StatusBadRequest, "settings", &page{Title: "Settings", Nav: "settings",
			Error: "codec_endpoint: want an http or https URL without user information, such as http://localhost:8081.",
			Data:  &settingsData{Codec: endpoint, ServerCodec: u.cfg.CodecEndpoint}})
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: codecCookie, Value: endpoint, Path: Prefix, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 400 * 24 * 3600,
	})
	http.Redirect(w, r, Prefix+"/settings?flash="+url.QueryEscape("Codec endpoint saved: this browser decodes payloads through "+endpoint+"."), http.StatusSeeOther)
}

// nsURL is the UI path of a namespace's page (segments escaped).
func nsURL(ns string, segs ...string) string {
	var b strings.Builder
	b.WriteString(Prefix + "/namespaces/")
	b.WriteString(url.PathEscape(ns))
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}
