package chaos

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetherhq/tether/internal/pgtest"
)

var (
	configName = flag.String("chaos.config", "small", "chaos configuration: small (CI), large, or citus (small on a Citus cluster: scripts/citus.sh build first)")
	keepDir    = flag.String("chaos.dir", "", "directory to keep the run's logs and execution logs in (default: a temporary one, removed)")
)

// bins are the binaries TestMain built.
var bins struct{ tether, worker string }

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "tether-chaos-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	bins.tether, bins.worker, err = Build(ctx, dir)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := pgtest.RunMain(m) // the checker's tests use pgtest databases
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// TestChaos runs the chaos configuration named by -chaos.config (small by
// default) against real processes and fails on any broken invariant. The
// report (faults, recovery times, extra executions) is logged.
func TestChaos(t *testing.T) {
	var cfg Config
	switch *configName {
	case "small":
		cfg = Small()
	case "large":
		cfg = Large()
	case "citus":
		cfg = SmallCitus()
	default:
		t.Fatalf("unknown -chaos.config %q: use small, large or citus", *configName)
	}
	cfg.Dir = t.TempDir()
	if *keepDir != "" {
		var err error
		if cfg.Dir, err = MkRunDir(*keepDir); err != nil {
			t.Fatal(err)
		}
		t.Logf("logs in %s", cfg.Dir)
	}
	cfg.TetherBin, cfg.WorkerBin = bins.tether, bins.worker
	cfg.Logf = t.Logf
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	if len(rep.Faults) != len(cfg.Faults) {
		t.Errorf("%d faults injected, want %d", len(rep.Faults), len(cfg.Faults))
	}
	if rep.Started != cfg.Workflows {
		t.Errorf("%d workflows started, want %d", rep.Started, cfg.Workflows)
	}
	for _, v := range rep.Violations() {
		t.Errorf("violation %s", v)
	}
	if t.Failed() {
		logTails(t, cfg.Dir)
	}
}

// logTails logs the end of each process log of the run.
func logTails(t *testing.T, dir string) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if len(b) > 2000 {
			b = b[len(b)-2000:]
		}
		t.Logf("--- %s (tail)\n%s", filepath.Base(p), b)
	}
}
