package server

import (
	"errors"
	"net/http"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// concurrencyProblem is the 409 of a start refused by its concurrency
// key's limit (storage.ConcurrencyLimitError): Problem.Limit names the key.
func concurrencyProblem(err error) *problemError {
	var ce *storage.ConcurrencyLimitError
	errors.As(err, &ce)
	p := newProblem(http.StatusConflict, api.ProblemConcurrencyLimit, "Concurrency limit reached", ce.Error()+".")
	p.Doc.Limit = "concurrency:" + ce.Key
	return p
}
