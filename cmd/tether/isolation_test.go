package main

import (
	"flag"
	"io"
	"testing"
	"time"
)

// TestIsolationFlags: the isolation bounds are flags of `tether server` and
// `tether dev`, with the store's defaults, and reach store.Options.
func TestIsolationFlags(t *testing.T) {
	none := func(*flag.FlagSet, *serveOptions) {}
	o, _, err := parseServe("tether server", nil, io.Discard, none)
	if err != nil {
		t.Fatal(err)
	}
	if s := o.appConfig(nil).Store; s.PendingMessages != 1000 || s.PendingMessageBytes != 32<<20 || s.TurnMessageBytes != 16<<20 ||
		s.ListTimeout != 5*time.Second {
		t.Fatalf("defaults: %d messages, %d bytes, %d turn bytes", s.PendingMessages, s.PendingMessageBytes, s.TurnMessageBytes)
	}
	o, _, err = parseServe("tether dev", []string{"--max-pending-messages", "5", "--max-pending-message-bytes", "-1",
		"--max-turn-message-bytes", "100", "--list-timeout", "2s"}, io.Discard, none)
	if err != nil {
		t.Fatal(err)
	}
	if s := o.appConfig(nil).Store; s.PendingMessages != 5 || s.PendingMessageBytes != -1 || s.TurnMessageBytes != 100 ||
		s.ListTimeout != 2*time.Second {
		t.Fatalf("set: %d messages, %d bytes, %d turn bytes", s.PendingMessages, s.PendingMessageBytes, s.TurnMessageBytes)
	}
}
