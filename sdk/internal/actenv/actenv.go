// Package actenv carries the per-attempt environment of a running activity
// in its context.Context, between package worker (which sets it) and package
// activity (which reads it).
package actenv

import (
	"context"
	"encoding/json"
	"time"
)

// Env is what an activity can learn about its attempt.
type Env struct {
	Namespace        string
	InstanceID       string
	ExecutionID      int64
	ActivityID       int64
	Attempt          int32
	ActivityType     string
	TaskQueue        string
	HostTaskQueue    string
	WorkflowType     string
	HeartbeatDetails json.RawMessage
	ScheduledAt      time.Time
	StartedAt        time.Time
	Deadline         time.Time
	WorkerID         string
	// Heartbeat records details to send with the next lock renewal.
	Heartbeat func(details json.RawMessage)
}

type key struct{}

// With returns ctx carrying env.
func With(ctx context.Context, env *Env) context.Context {
	return context.WithValue(ctx, key{}, env)
}

// From returns the env of ctx, or nil outside an activity.
func From(ctx context.Context) *Env {
	e, _ := ctx.Value(key{}).(*Env)
	return e
}
