package main

import (
	"github.com/spf13/pflag"
	"io"
	"testing"
)

// TestIsolationFlags: the isolation bounds are flags of `tether server` and
// `tether dev`, with the store's defaults, and reach store.Options.
func TestIsolationFlags(t *testing.T) {
	none := func(*pflag.FlagSet, *serveOptions) {}
	o, _, err := parseServe("tether server", nil, io.Discard, none)
	if err != nil {
		t.Fatal(err)
	}
	if s := o.appConfig(nil).Store; s.PendingMessages != 1000 || s.PendingMessageBytes != 32<<20 || s.TurnMessageBytes != 16<<20 {
		t.Fatalf("defaults: %d messages, %d bytes, %d turn bytes", s.PendingMessages, s.PendingMessageBytes, s.TurnMessageBytes)
	}
	o, _, err = parseServe("tether dev", []string{"--max-pending-messages", "5", "--max-pending-message-bytes", "-1",
		"--max-turn-message-bytes", "100"}, io.Discard, none)
	if err != nil {
		t.Fatal(err)
	}
	if s := o.appConfig(nil).Store; s.PendingMessages != 5 || s.PendingMessageBytes != -1 || s.TurnMessageBytes != 100 {
		t.Fatalf("set: %d messages, %d bytes, %d turn bytes", s.PendingMessages, s.PendingMessageBytes, s.TurnMessageBytes)
	}
}
