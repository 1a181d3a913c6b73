package main

import (
	"net"
	"strings"
	"testing"
)

func TestBannerNamesTheUI(t *testing.T) {
	var b strings.Builder
	printBanner(&b, &net.TCPAddr{IP: net.IPv4zero, Port: 7171}, "postgres://x", false, "", false)
	if !strings.Contains(b.String(), "UI        http://localhost:7171/ui/") {
		t.Fatalf("the banner does not name the UI:\n%s", b.String())
	}
}
