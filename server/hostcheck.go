package server

import (
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// checkHost refuses (403) a request whose Host header names a host that
// is neither an IP address nor one of Config.AllowedHosts (when set). A
// page that makes its own name resolve to 127.0.0.1 (DNS rebinding)
// sends its name as Host, and is refused: only a name the operator
// allowed, or an address, reaches a server that trusts its network.
func (s *Server) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	if len(s.cfg.AllowedHosts) == 0 {
		return next
	}
	return func(c echo.Context) error {
		host := c.Request().Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
		if net.ParseIP(host) != nil || slices.Contains(s.cfg.AllowedHosts, host) {
			return next(c)
		}
		return newProblem(http.StatusForbidden, ProblemForbidden, "Forbidden",
			"This server answers only requests addressed to "+strings.Join(s.cfg.AllowedHosts, ", ")+
				" or to an IP address (the Host header named "+quoteHeader(c.Request().Host)+"); add a name with --allowed-host.")
	}
}
