// Command stmtcpu measures what one SQL statement costs the PostgreSQL
// backend that runs it: the statement is run -n times on one connection
// (prepared, after 20 warm-up calls, so that the plan cache has settled)
// and the backend's CPU time (/proc/PID/stat, user + system) is divided by
// the calls. Unlike pg_stat_statements' total_exec_time, the figure
// includes the executor's start-up, the protocol and the implicit
// transaction of each call. The database must run on this machine.
//
//	go run ./scripts/stmtcpu -url "$DATABASE_URL" -sql lock.sql \
//	    -args '0,w1,,10,bn,NULL,bq,false,1000' -setup setup.sql
//
// -args lists the statement's parameters in order, comma separated: NULL
// for a SQL NULL, true/false for booleans, integers as integers, anything
// else as text. -setup runs a script once before the warm-up.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "stmtcpu:", err)
		os.Exit(1)
	}
}

func run() error {
	url := flag.String("url", os.Getenv("DATABASE_URL"), "database URL (default $DATABASE_URL)")
	sqlFile := flag.String("sql", "", "file holding the statement")
	setup := flag.String("setup", "", "file holding a script to run once first")
	args := flag.String("args", "", "the statement's parameters, comma separated")
	n := flag.Int("n", 5000, "calls measured")
	flag.Parse()
	if *sqlFile == "" {
		return errors.New("-sql is required")
	}
	stmt, err := os.ReadFile(*sqlFile)
	if err != nil {
		return fmt.Errorf("read -sql: %w", err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, *url)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if *setup != "" {
		script, err := os.ReadFile(*setup)
		if err != nil {
			return fmt.Errorf("read -setup: %w", err)
		}
		if _, err := conn.Exec(ctx, string(script)); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
	}
	params := parseArgs(*args)
	var pid int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		return fmt.Errorf("backend pid: %w", err)
	}
	rows := 0
	call := func() error {
		r, err := conn.Query(ctx, string(stmt), params...)
		if err != nil {
			return err
		}
		for r.Next() {
			rows++
		}
		return r.Err()
	}
	for range 20 {
		if err := call(); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	rows = 0
	cpu0, err := backendCPU(pid)
	if err != nil {
		return err
	}
	t0 := time.Now()
	for range *n {
		if err := call(); err != nil {
			return fmt.Errorf("call: %w", err)
		}
	}
	wall := time.Since(t0)
	cpu1, err := backendCPU(pid)
	if err != nil {
		return err
	}
	fmt.Printf("calls %d rows %d backend CPU %.1f µs/call, wall %.1f µs/call\n",
		*n, rows, float64((cpu1-cpu0).Microseconds())/float64(*n), float64(wall.Microseconds())/float64(*n))
	return nil
}

// parseArgs turns -args into the statement's parameters.
func parseArgs(s string) []any {
	if s == "" {
		return nil
	}
	var out []any
	for _, a := range strings.Split(s, ",") {
		switch a {
		case "NULL":
			out = append(out, nil)
		case "true", "false":
			out = append(out, a == "true")
		default:
			if v, err := strconv.ParseInt(a, 10, 64); err == nil {
				out = append(out, v)
			} else {
				out = append(out, a)
			}
		}
	}
	return out
}

// backendCPU is the user + system CPU time the process pid has used
// (clock ticks of 10 ms).
func backendCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("backend CPU (the database must run on this machine): %w", err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0, fmt.Errorf("backend CPU: short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("backend CPU: %w", err)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
