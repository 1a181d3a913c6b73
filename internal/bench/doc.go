// Package bench is `tether bench`: load scenarios against a Tether server
// and its PostgreSQL database, each reporting a few figures.
//
// An Env is where a bench runs. Start either starts a throwaway PostgreSQL
// cluster (internal/pgtest, as `tether dev` does) and a server in this
// process on a loopback port, or runs the server over a given database, or
// connects to a running server (then without database figures unless a
// database URL is given too). Close stops everything Start started,
// including the child processes of the scenarios.
//
// The scenarios (methods of Env) are:
//
//   - Throughput: N one-activity workflows, M concurrent starters, W worker
//     processes → workflows/s, activities/s, start-to-result latency,
//     commits per workflow.
//   - Fanout: 20 workflows in flight, each 5 parallel activities of 10ms,
//     for a fixed time → workflows/s, activities/s.
//   - Dispatch: single activities at a low rate → schedule-to-start latency.
//   - Flow: a trickle of one fairness key on the idle queue, then behind a
//     backlog of another key started with no worker polling → the
//     trickle's latencies side by side.
//   - Cancel: running activities cancelled → cancel delivery latency; one
//     workflow with 10 000 outstanding activities cancelled → the turn's
//     commit time and statements.
//   - Failover: a worker process killed mid-activity → time until the
//     activity runs elsewhere.
//   - Heartbeats: K simulated workers heartbeating once a second → latency,
//     commits/s, server CPU.
//   - Ceiling: the database's single-row commit rate, which Run measures
//     before every scenario so that commit rates can be read as a fraction
//     of what the machine can do.
//
// Worker processes and the heartbeat load are child processes: the tether
// binary runs itself as `tether bench worker …` / `tether bench
// heartbeat-load …` (see Launcher and ChildMain). Every load loop is
// bounded in count and time, and all traffic goes to loopback addresses.
package bench
