package auth

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/edge"
)

// The workflow start rate of an API key (Config.StartRate) covers
// every request that starts workflows, not only POST /workflows: a
// signal-with-start, a schedule's trigger and backfill, and a workflow
// turn that starts child workflows or continues as new. Such a request
// is refused with 429 and Retry-After while its key's bucket holds no
// whole token (startsReady); once done, it is charged one token per
// workflow it started (chargeStarts), into debt when it started more
// than the bucket held, so that the key's next starts wait.

// StartsReady answers 429 with Retry-After when the caller's key may not
// start a workflow now. Without authentication there is no such limit.
func (a *Authorizer) StartsReady(c echo.Context, ns string) error {
	k := Principal(c)
	if k == nil {
		return nil
	}
	ok, retry := a.starts.Ready(ns, k.ID, time.Now())
	if ok {
		return nil
	}
	c.Response().Header().Set("Retry-After", edge.RetryAfterSeconds(retry))
	return edge.NewProblem(http.StatusTooManyRequests, api.ProblemRateLimited, "Too many requests",
		"this API key starts workflows too often; retry after "+retry.Round(time.Millisecond).String())
}

// ChargeStarts counts n workflows the caller's key has started against
// its start rate.
func (a *Authorizer) ChargeStarts(c echo.Context, ns string, n int) {
	if k := Principal(c); k != nil {
		a.starts.Charge(ns, k.ID, time.Now(), n)
	}
}

// TurnStarts is how many workflows a turn's commands start: its child
// workflows, and its next execution when it continues as new.
func TurnStarts(cmds []api.Command) int {
	n := 0
	for _, c := range cmds {
		if c.Type == api.CommandStartChildWorkflow || c.Type == api.CommandContinueAsNew {
			n++
		}
	}
	return n
}
