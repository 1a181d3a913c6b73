package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/spf13/pflag"
)

func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var withAuth bool
	o, logger, err := parseServe("tether dev", args, stderr, func(fs *pflag.FlagSet, o *serveOptions) {
		o.auth.devFlags(fs, &withAuth)
		o.isolation.devHostFlag(fs)
	})
	var devKey string
	if err == nil {
		o.addr = o.auth.devSetup(o.addrSet, o.addr, withAuth, &devKey)
	}
	if err != nil {
		return err
	}

	throwaway := o.databaseURL == ""
	if throwaway {
		url, stop, err := startDevDatabase(ctx, logger)
		if err != nil {
			return err
		}
		// Stop PostgreSQL however serve ends, failures to start included.
		defer func() {
			if serr := stop(); serr != nil {
				err = errors.Join(err, fmt.Errorf("stop the development database: %w", serr))
			}
		}()
		o.databaseURL = url
	}

	return serve(ctx, o, logger, func(addr net.Addr) {
		printBanner(stdout, addr, o.databaseURL, throwaway, devKey, o.auth.tlsCert != "")
	})
}

// printBanner tells the developer where the server is and how to use it.
// With an API key (dev --auth), the curl commands send it.
func printBanner(w io.Writer, addr net.Addr, databaseURL string, throwaway bool, key string, https bool) {
	base := "http://" + displayAddr(addr)
	if https {
		base = "https://" + displayAddr(addr)
	}
	keyLines, header := "", ""
	if key != "" {
		keyLines = fmt.Sprintf("    API key   %s\n              (admin of every namespace: export TETHER_API_KEY=%s)\n", key, key)
		header = ` -H "Authorization: Bearer $TETHER_API_KEY"`
	}
	db := databaseURL
	if throwaway {
		db += "  (throwaway: removed on exit)"
	}
	fmt.Fprintf(w, `
  Tether dev server
    API       %[1]s/v1/namespaces/default
    UI        %[1]s/ui/
    Docs      %[1]s/docs
    Metrics   %[1]s/metrics
    Database  %[2]s
%[3]s
  Try it:
    curl -s%[4]s -X POST %[1]s/v1/namespaces/default/workflows \
      -H 'Content-Type: application/json' -d '{"workflow_type":"Hello","task_queue":"demo","input":{"name":"world"}}'
    curl -s%[4]s %[1]s/v1/namespaces/default/workflows

  Press Ctrl-C to stop.

`, base, db, keyLines, header)
}

// displayAddr turns a listening address into one a browser can reach
// (":7070" and "[::]:7070" become "localhost:7070").
func displayAddr(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.String()
	}
	host := "localhost"
	if !tcp.IP.IsUnspecified() && tcp.IP != nil {
		host = tcp.IP.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}
