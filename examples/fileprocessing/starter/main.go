// Command starter runs a batch of the file-processing sample: it serves
// generated input files and receives the uploads on a loopback port, starts
// one workflow per file, waits for them, and prints which host did each
// step.
//
//	go run ./examples/fileprocessing/starter -files 20
//
// Its server is -address, by default $TETHER_ADDRESS or else
// http://127.0.0.1:7070; the API key, when the server requires one, comes
// from $TETHER_API_KEY.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tetherhq/tether/examples/fileprocessing"
	"github.com/tetherhq/tether/sdk/client"
)

func main() {
	var o fileprocessing.BatchOptions
	address := flag.String("address", fileprocessing.DefaultAddress(), "Tether server address (default: $"+fileprocessing.EnvAddress+" if set); the API key comes from $TETHER_API_KEY")
	dest := flag.String("dest", filepath.Join(os.TempDir(), "fp", "uploads"), "directory that receives the uploads")
	timeout := flag.Duration("timeout", 5*time.Minute, "give up waiting after this long")
	flag.IntVar(&o.Files, "files", 20, "number of files (one workflow each)")
	flag.IntVar(&o.Size, "size", 256<<10, "size of each file in bytes")
	flag.StringVar(&o.TaskQueue, "queue", fileprocessing.TaskQueue, "shared task queue")
	flag.IntVar(&o.MaxHosts, "max-hosts", fileprocessing.DefaultMaxHosts, "hosts tried per file before giving up")
	flag.DurationVar(&o.HostScheduleToStart, "host-schedule-to-start", fileprocessing.DefaultHostScheduleToStart, "ScheduleToStartTimeout of the steps pinned to a host")
	flag.BoolVar(&o.OnHost, "run-on-host", false, "use ProcessFileOnHost (workflow.RunOnHost) instead of the explicit pattern")
	flag.Parse()
	if err := run(*address, *dest, *timeout, o); err != nil {
		fmt.Fprintln(os.Stderr, "starter:", err)
		os.Exit(1)
	}
}

func run(address, dest string, timeout time.Duration, o fileprocessing.BatchOptions) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	fs, err := fileprocessing.StartFileServer(dest, logger)
	if err != nil {
		return err
	}
	defer fs.Close()
	c, err := client.DialContext(ctx, client.Options{Address: address, Logger: logger})
	if err != nil {
		return err
	}
	begin := time.Now()
	files, err := fileprocessing.StartBatch(ctx, c, fs, o)
	if err != nil {
		return err
	}
	fmt.Printf("started %d workflows on %q; files served at %s, uploads go to %s\n", len(files), o.TaskQueue, fs.URL(), dest)
	results := fileprocessing.WaitBatch(ctx, files)
	if err := fileprocessing.PrintReport(os.Stdout, results); err != nil {
		return err
	}
	if err := fileprocessing.CheckBatch(results, fs); err != nil {
		return fmt.Errorf("check failed:\n%w", err)
	}
	fmt.Printf("all %d files processed and uploaded with correct checksums, every step on the host that downloaded the file (%s)\n",
		len(results), time.Since(begin).Round(time.Millisecond))
	return nil
}
