package server

import "github.com/tetherhq/tether/api"

// checkHeader adds a problem naming field when h is beyond the header's
// bounds (api.MaxHeaderFields, api.MaxHeaderBytes). An absent header costs
// nothing.
func (b *binder) checkHeader(field string, h api.Header) {
	if len(h) == 0 {
		return
	}
	if msg := api.HeaderProblem(h); msg != "" {
		b.check(false, field, "%s", msg)
	}
}
