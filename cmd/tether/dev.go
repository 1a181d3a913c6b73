package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
)

func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("tether dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o serveOptions
	o.flags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o.addr = devAddr(fs, o.addr, os.Getenv(envAddr))
	logger, err := newLogger(stderr, o.logLevel, o.logFormat)
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
		printBanner(stdout, addr, o.databaseURL, throwaway)
	})
}

// devListenAddr is where tether dev listens unless told otherwise: the
// loopback interface only, so that a development server is not open to
// the network.
const devListenAddr = "127.0.0.1" + defaultAddr

// devAddr returns the address tether dev listens on: addr when --addr or
// $TETHER_ADDR (env) gave it, else devListenAddr.
func devAddr(fs *flag.FlagSet, addr, env string) string {
	explicit := env != ""
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "addr" {
			explicit = true
		}
	})
	if explicit {
		return addr
	}
	return devListenAddr
}

// printBanner tells the developer where the server is and how to use it.
func printBanner(w io.Writer, addr net.Addr, databaseURL string, throwaway bool) {
	base := "http://" + displayAddr(addr)
	db := databaseURL
	if throwaway {
		db += "  (throwaway: removed on exit)"
	}
	fmt.Fprintf(w, `
  Tether dev server
    API       %[1]s/v1/namespaces/default
    Docs      %[1]s/docs
    Metrics   %[1]s/metrics
    Database  %[2]s

  Try it:
    curl -s -X POST %[1]s/v1/namespaces/default/workflows \
      -H 'Content-Type: application/json' -d '{"workflow_type":"Hello","task_queue":"demo","input":{"name":"world"}}'
    curl -s %[1]s/v1/namespaces/default/workflows

  Press Ctrl-C to stop.

`, base, db)
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
