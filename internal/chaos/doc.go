// Package chaos runs Tether under injected faults and checks that nothing
// was lost: a real tether server process, real worker processes using the
// Go SDK and a real PostgreSQL carry a steady load while workers are killed
// or paused, the server is killed and restarted, and PostgreSQL restarts in
// immediate mode. Afterwards a checker reads the database and the workers'
// execution logs and reports every broken invariant by name (see
// docs/reliability.md).
package chaos
