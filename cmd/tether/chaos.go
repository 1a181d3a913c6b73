package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tetherhq/tether/internal/chaos"
)

// errViolations: a chaos run found broken invariants (they are printed).
var errViolations = errors.New("invariants broken")

// runChaos runs the chaos suite (docs/reliability.md) against this binary:
// a throwaway PostgreSQL, `tether server` processes and worker processes
// (`tether chaos worker`, hidden), with the faults of the configuration.
func runChaos(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "worker" {
		// Hidden: a worker process started by a chaos run.
		return chaos.WorkerMain(ctx, args[1:], stdout, stderr)
	}
	fs := newFlagSet("tether chaos", stderr)
	config := fs.String("config", "large", "small (the CI configuration), large, or citus (small on a Citus cluster of a coordinator and two worker nodes, with a worker node's restart; the citus extension installed: scripts/citus.sh build)")
	workflows := fs.Int("workflows", 0, "workflows to run (0: the configuration's)")
	workers := fs.Int("workers", 0, "worker processes (0: the configuration's)")
	dir := fs.String("dir", "", "directory for the run's logs and execution logs (default: a temporary one, removed unless the run fails)")
	timeout := fs.Duration("timeout", 20*time.Minute, "longest the run may take")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var cfg chaos.Config
	switch *config {
	case "small":
		cfg = chaos.Small()
	case "large":
		cfg = chaos.Large()
	case "citus":
		cfg = chaos.SmallCitus()
	default:
		fmt.Fprintf(stderr, "tether chaos: unknown --config %q: use small, large or citus\n", *config)
		return errUsage
	}
	if *workflows > 0 {
		cfg.Workflows = *workflows
	}
	if *workers > 0 {
		cfg.Workers = *workers
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary: %w", err)
	}
	cfg.TetherBin, cfg.WorkerBin, cfg.WorkerArgs = exe, exe, []string{"chaos", "worker"}
	parent, keep := *dir, *dir != ""
	if parent == "" {
		parent = os.TempDir()
	}
	if cfg.Dir, err = chaos.MkRunDir(parent); err != nil {
		return err
	}
	cfg.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		return fmt.Errorf("%w (logs in %s)", err, cfg.Dir)
	}
	fmt.Fprint(stdout, rep)
	if len(rep.Violations()) > 0 || rep.Started != cfg.Workflows {
		fmt.Fprintf(stderr, "logs in %s\n", cfg.Dir)
		return errViolations
	}
	if !keep {
		_ = os.RemoveAll(cfg.Dir)
	}
	return nil
}
