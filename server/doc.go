// Package server is Tether's HTTP/JSON control plane: an Echo application
// that validates every request, calls the store, answers errors as
// application/problem+json, and serves the long polls of workers and of
// clients waiting for results.
//
// The OpenAPI document in openapi/ is generated from the annotations of the
// handlers in this package with
//
//	go tool swag init -q -g doc.go -d server,api -o openapi --ot json,yaml
//
//	@title						Tether API
//	@version					1
//	@description				Tether is a durable workflow engine on PostgreSQL. Workers long-poll this API for workflow turns and activity attempts, run them, and report back; clients start, inspect, signal and cancel workflows.
//	@description				Every error answer is an RFC 9457 problem document (application/problem+json); validation failures name each bad field in "errors".
//	@description				Durations are Go duration strings such as "30s"; payloads (input, result, details) are any JSON value.
//	@BasePath					/
//	@schemes					http https
//	@tag.name					workflows
//	@tag.description			Start, describe, list, signal, cancel and delete workflow instances; wait for results.
//	@tag.name					workflow-tasks
//	@tag.description			Workflow turns: poll a task queue for a locked turn, then complete or fail it.
//	@tag.name					activity-tasks
//	@tag.description			Activity attempts: poll, heartbeat, complete, fail or abandon.
//	@tag.name					workers
//	@tag.description			Worker sessions: heartbeats with a lease, and their state.
//	@tag.name					task-queues
//	@tag.description			Task queue backlog and the workers serving it.
//	@tag.name					system
//	@tag.description			Health, readiness, metrics and this document.
package server
