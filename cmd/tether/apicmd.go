package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/converter"
)

// client returns an SDK client for the global flags.
func (c *cli) client() (*client.TetherClient, error) {
	opts := client.Options{
		Address:   c.address,
		Namespace: c.namespace,
		APIKey:    c.apiKey,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if c.codecEndpoint != "" {
		u, err := url.Parse(c.codecEndpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usageErrorf("--codec-endpoint must be an http or https URL, not %q", c.codecEndpoint)
		}
		// Payloads are encoded and decoded by the codec server, as the
		// SDK's codecs would: envelopes are shown decoded. X-Namespace
		// names the namespace, as Temporal's CLI does, for codec servers
		// that serve several.
		ns := c.namespace
		opts.DataConverter = converter.NewCodecDataConverter(converter.GetDefaultDataConverter(),
			converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{Endpoint: c.codecEndpoint,
				ModifyRequest: func(r *http.Request) error {
					r.Header.Set("X-Namespace", ns)
					return nil
				}}))
	}
	cl, err := client.New(opts)
	if err != nil {
		return nil, usageErrorf("--address: %w", err)
	}
	return cl, nil
}

// apiError gives an error of the SDK client its exit code and a message
// naming the problem type.
func apiError(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	code := exitFailure
	kind := "error"
	var te *client.TransportError
	switch {
	case errors.Is(err, client.ErrNotFound):
		code, kind = exitNotFound, "not found"
	case errors.Is(err, client.ErrConflict):
		code, kind = exitConflict, "conflict"
	case errors.Is(err, client.ErrUnauthorized):
		code, kind = exitAuth, "unauthorized"
	case errors.Is(err, client.ErrForbidden):
		code, kind = exitAuth, "forbidden"
	case errors.Is(err, client.ErrInvalidRequest), errors.Is(err, client.ErrTooLarge):
		code, kind = exitUsage, "invalid request"
	case errors.Is(err, client.ErrServer), errors.Is(err, client.ErrRateLimited), errors.Is(err, client.ErrGone):
		code, kind = exitServer, "server error"
	case errors.As(err, &te):
		code, kind = exitServer, "transport error"
	}
	var pe *client.ProblemError
	if errors.As(err, &pe) && pe.Problem.Type != "" {
		kind += " (" + pe.Problem.Type + ")"
	}
	return &exitError{code: code, err: fmt.Errorf("%s: %w", kind, err)}
}

// json reports whether the output is JSON.
func (c *cli) json() bool { return c.output == "json" }

// printJSON writes v as indented JSON.
func (c *cli) printJSON(v any) error {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table writes rows (the first is the header) aligned in columns.
func (c *cli) table(rows [][]string) error {
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// fields writes name/value pairs, one a line, aligned.
func (c *cli) fields(pairs ...string) error {
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue
		}
		fmt.Fprintf(tw, "%s:\t%s\n", pairs[i], pairs[i+1])
	}
	return tw.Flush()
}

// timeText formats a time for a table ("" for the zero time).
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// timePtrText formats an optional time.
func timePtrText(t *time.Time) string {
	if t == nil {
		return ""
	}
	return timeText(*t)
}

// jsonText is raw JSON for a table: compact, "" when empty.
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// exactArgs is cobra.ExactArgs naming the arguments in its message.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return usageErrorf("want %d argument(s) (%s), got %d", len(names), strings.Join(names, ", "), len(args))
		}
		for i, a := range args {
			if strings.TrimSpace(a) == "" {
				return usageErrorf("%s must not be empty", names[i])
			}
		}
		return nil
	}
}

// clientWithPayload is what a command that sends a payload needs: the JSON
// of its flag --name (value v; a nil payload when v is empty, so that
// none is sent), checked before the client is made.
func (c *cli) clientWithPayload(name, v string) (*client.TetherClient, any, error) {
	raw, err := jsonFlag(name, v)
	if err != nil {
		return nil, nil, err
	}
	cl, err := c.client()
	if err != nil {
		return nil, nil, err
	}
	if raw == nil {
		return cl, nil, nil
	}
	return cl, raw, nil
}

// jsonFlag checks that a flag's value is JSON and returns it ("" → nil).
func jsonFlag(name, v string) (json.RawMessage, error) {
	if v == "" {
		return nil, nil
	}
	if !json.Valid([]byte(v)) {
		return nil, usageErrorf("--%s is not valid JSON: %q (a string needs quotes: '\"text\"')", name, v)
	}
	return json.RawMessage(v), nil
}
