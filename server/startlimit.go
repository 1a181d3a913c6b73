package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/edge"
)

// The workflow start rate of an API key (AuthConfig.StartRate) covers
// every request that starts workflows, not only POST /workflows: a
// signal-with-start, a schedule's trigger and backfill, and a workflow
// turn that starts child workflows or continues as new. Such a request
// is refused with 429 and Retry-After while its key's bucket holds no
// whole token (startsReady); once done, it is charged one token per
// workflow it started (chargeStarts), into debt when it started more
// than the bucket held, so that the key's next starts wait.

// startsReady answers 429 with Retry-After when the caller's key may not
// start a workflow now. Without authentication there is no such limit.
func (s *Server) startsReady(c echo.Context, ns string) error {
	k := principal(c)
	if k == nil {
		return nil
	}
	ok, retry := s.startLimiter.Ready(ns, k.ID, time.Now())
	if ok {
		return nil
	}
	c.Response().Header().Set("Retry-After", edge.RetryAfterSeconds(retry))
	return newProblem(http.StatusTooManyRequests, ProblemRateLimited, "Too many requests",
		"this API key starts workflows too often; retry after "+retry.Round(time.Millisecond).String())
}

// chargeStarts counts n workflows the caller's key has started against
// its start rate.
func (s *Server) chargeStarts(c echo.Context, ns string, n int) {
	if k := principal(c); k != nil {
		s.startLimiter.Charge(ns, k.ID, time.Now(), n)
	}
}

// turnStarts is how many workflows a turn's commands start: its child
// workflows, and its next execution when it continues as new.
func turnStarts(cmds []api.Command) int {
	n := 0
	for _, c := range cmds {
		if c.Type == api.CommandStartChildWorkflow || c.Type == api.CommandContinueAsNew {
			n++
		}
	}
	return n
}
