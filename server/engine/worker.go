package engine

import (
	"errors"
	"fmt"

	"github.com/tetherhq/tether/api"
)

// Worker lifecycle events (docs/liveness.md).
const (
	// WorkerEventHeartbeat: a heartbeat arrived.
	WorkerEventHeartbeat = "heartbeat"
	// WorkerEventLeaseExpired: the lease deadline passed without a heartbeat.
	WorkerEventLeaseExpired = "lease_expired"
	// WorkerEventCleanup: the cleanup delay passed while inactive.
	WorkerEventCleanup = "cleanup"
)

// ErrInvalidTransition is returned for an event a worker state does not
// accept.
var ErrInvalidTransition = errors.New("invalid worker transition")

// ErrWorkerCleanedUp is returned for a heartbeat of a cleaned-up worker.
var ErrWorkerCleanedUp = errors.New("worker cleaned up")

// WorkerTransition is the worker state machine:
//
//	(new)    --heartbeat-->     ACTIVE
//	ACTIVE   --heartbeat-->     ACTIVE      (lease renewed)
//	ACTIVE   --lease_expired--> INACTIVE    (attempts cancelled and rescheduled)
//	INACTIVE --heartbeat-->     ACTIVE      (resurrection; old attempts stay cancelled)
//	INACTIVE --cleanup-->       CLEANED_UP  (terminal; heartbeats get ErrWorkerCleanedUp)
//
// state "" is a worker the server has never seen. Every other pair is
// invalid. The SQL of the store implements these transitions set-based; this
// function is their specification, used to classify what a statement did.
func WorkerTransition(state, event string) (string, error) {
	switch {
	case event == WorkerEventHeartbeat && (state == "" || state == api.WorkerActive || state == api.WorkerInactive):
		return api.WorkerActive, nil
	case event == WorkerEventHeartbeat && state == api.WorkerCleanedUp:
		return state, ErrWorkerCleanedUp
	case event == WorkerEventLeaseExpired && state == api.WorkerActive:
		return api.WorkerInactive, nil
	case event == WorkerEventCleanup && state == api.WorkerInactive:
		return api.WorkerCleanedUp, nil
	}
	return state, fmt.Errorf("%w: %q on state %q", ErrInvalidTransition, event, state)
}

// Resurrected reports whether a heartbeat on prevState brought the worker
// back from INACTIVE.
func Resurrected(prevState string) bool { return prevState == api.WorkerInactive }
