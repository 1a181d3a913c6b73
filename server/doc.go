// Package server is Tether's HTTP/JSON control plane: an Echo application
// that validates every request, calls the store, answers errors as
// application/problem+json, and serves the long polls of workers and of
// clients waiting for results.
//
// The OpenAPI document in openapi/ is generated from the annotations of the
// handlers in this package with
//
//	go tool -modfile=tools/go.mod swag init -q -g doc.go -d server,api -o openapi --ot json,yaml
//
//	@title						Tether API
//	@version					1
//	@description				Tether is a durable workflow engine on PostgreSQL. Workers long-poll this API for workflow turns and activity attempts, run them, and report back; clients start, inspect, signal and cancel workflows.
//	@description				Every error answer is an RFC 9457 problem document (application/problem+json); validation failures name each bad field in "errors".
//	@description				Durations are Go duration strings such as "30s"; payloads (input, result, details) are any JSON value.
//	@description				Unless the server runs with authentication off, every route but /healthz, /readyz, /metrics and the API documents needs an API key: "Authorization: Bearer <key>". A missing or invalid key is 401; a key whose role or namespace does not allow the route is 403.
//	@BasePath					/
//	@securityDefinitions.apikey	BearerAuth
//	@in							header
//	@name						Authorization
//	@description				"Bearer <key>", an API key of role worker, client, reader or admin (see docs/security.md).
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
//	@tag.name					namespaces
//	@tag.description			Create, list, describe and delete namespaces.
//	@tag.name					api-keys
//	@tag.description			API keys of a namespace: create (shown once), list, revoke.
//	@tag.name					system
//	@tag.description			Health, readiness, metrics and this document.
package server
