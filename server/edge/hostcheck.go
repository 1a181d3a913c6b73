package edge

import (
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// CheckHost returns the middleware that refuses (403) a request whose Host
// header names a host that is neither an IP address nor one of allowed
// (when not empty; empty: no check). A
// page that makes its own name resolve to 127.0.0.1 (DNS rebinding)
// sends its name as Host, and is refused: only a name the operator
// allowed, or an address, reaches a server that trusts its network.
func CheckHost(allowed []string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if len(allowed) == 0 {
			return next
		}
		return func(c echo.Context) error {
			host := c.Request().Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
			if net.ParseIP(host) != nil || slices.Contains(allowed, host) {
				return next(c)
			}
			return NewProblem(http.StatusForbidden, ProblemForbidden, "Forbidden",
				"This server answers only requests addressed to "+strings.Join(allowed, ", ")+
					" or to an IP address (the Host header named "+QuoteHeader(c.Request().Host)+"); add a name with --allowed-host.")
		}
	}
}
