package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tetherhq/tether/api"
)

// TestSentinelByProblemType: the problem type decides the sentinel; the
// status decides only when the type names none.
func TestSentinelByProblemType(t *testing.T) {
	cases := []struct {
		typ    string
		status int
		want   error
		not    error
	}{
		// The type is more precise than the status.
		{api.ProblemLockLost, http.StatusConflict, ErrLockLost, nil},
		{api.ProblemAlreadyRunning, http.StatusConflict, ErrAlreadyRunning, nil},
		{api.ProblemAlreadyExists, http.StatusConflict, ErrScheduleAlreadyRunning, ErrAlreadyRunning},
		{api.ProblemNotRunning, http.StatusConflict, ErrConflict, ErrLockLost},
		// The type wins over a status that would say otherwise.
		{api.ProblemWorkerGone, http.StatusBadRequest, ErrGone, ErrInvalidRequest},
		{api.ProblemRateLimited, http.StatusServiceUnavailable, ErrRateLimited, ErrServer},
		{api.ProblemValidation, http.StatusUnprocessableEntity, ErrInvalidRequest, nil},
		{api.ProblemUnavailable, http.StatusServiceUnavailable, ErrServer, nil},
		// A type that names no sentinel falls back to the status.
		{"about:blank", http.StatusNotFound, ErrNotFound, nil},
		{api.ProblemNoRoute, http.StatusNotFound, ErrNotFound, nil},
		{api.ProblemBase + "added-later", http.StatusServiceUnavailable, ErrServer, nil},
	}
	for _, tc := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/healthz" {
				return
			}
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(tc.status)
			_ = json.NewEncoder(w).Encode(api.Problem{Type: tc.typ, Title: "x", Status: tc.status})
		}))
		c, err := DialContext(context.Background(), Options{Address: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Describe(context.Background(), "w")
		srv.Close()
		var pe *ProblemError
		if !errors.As(err, &pe) || pe.Problem.Type != tc.typ || pe.Status != tc.status {
			t.Fatalf("%s %d: %v", tc.typ, tc.status, err)
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s %d: %v is not %v", tc.typ, tc.status, err, tc.want)
		}
		if tc.not != nil && errors.Is(err, tc.not) {
			t.Errorf("%s %d: %v is %v", tc.typ, tc.status, err, tc.not)
		}
	}
}

// TestSentinelForEveryTypeAndStatus pins sentinelFor for every problem type
// of api.ProblemTypes (with a status that names no sentinel) and for every
// status from 400 to 599 (with a type that names none).
func TestSentinelForEveryTypeAndStatus(t *testing.T) {
	byType := map[string]error{
		api.ProblemValidation:            ErrInvalidRequest,
		api.ProblemNotFound:              ErrNotFound,
		api.ProblemAlreadyRunning:        ErrAlreadyRunning,
		api.ProblemLockLost:              ErrLockLost,
		api.ProblemDuplicateReport:       ErrDuplicateReport,
		api.ProblemAlreadyExists:         ErrScheduleAlreadyRunning,
		api.ProblemNotRunning:            ErrConflict,
		api.ProblemRunning:               ErrConflict,
		api.ProblemUnhandledSignals:      ErrConflict,
		api.ProblemSearchAttributeExists: ErrConflict,
		api.ProblemLimitExceeded:         ErrConflict,
		api.ProblemConcurrencyLimit:      ErrConcurrencyLimit,
		api.ProblemWorkerGone:            ErrGone,
		api.ProblemBodyTooLarge:          ErrTooLarge,
		api.ProblemRateLimited:           ErrRateLimited,
		api.ProblemQueryFailed:           ErrQueryFailed,
		api.ProblemInternal:              ErrServer,
		api.ProblemUnavailable:           ErrServer,
		api.ProblemDatabaseUnavailable:   ErrServer,
		api.ProblemQueryTimeout:          ErrServer,
	}
	for _, typ := range api.ProblemTypes() {
		if got := sentinelFor(http.StatusTeapot, typ); got != byType[typ] {
			t.Errorf("type %s: sentinel %v, want %v", typ, got, byType[typ])
		}
	}
	byStatus := map[int]error{
		http.StatusBadRequest:            ErrInvalidRequest,
		http.StatusUnauthorized:          ErrUnauthorized,
		http.StatusForbidden:             ErrForbidden,
		http.StatusNotFound:              ErrNotFound,
		http.StatusConflict:              ErrConflict,
		http.StatusGone:                  ErrGone,
		http.StatusRequestEntityTooLarge: ErrTooLarge,
		http.StatusTooManyRequests:       ErrRateLimited,
	}
	for status := 400; status < 600; status++ {
		want := byStatus[status]
		if status >= 500 {
			want = ErrServer
		}
		if got := sentinelFor(status, "about:blank"); got != want {
			t.Errorf("status %d: sentinel %v, want %v", status, got, want)
		}
	}
}
