package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what a scenario measured.
type Report struct {
	// Scenario is the scenario's name.
	Scenario string
	// Setup says where it ran.
	Setup Setup
	// Params are the scenario's parameters, in display order.
	Params []Param
	// Figures are the measurements, in display order.
	Figures []Figure
	// Ceiling is the database's single-row commit rate measured in the
	// same run, if it was.
	Ceiling *CeilingResult
	// Notes qualify the figures.
	Notes []string
	// Statements are the heaviest statements of the run (see
	// RunOptions.TopStatements).
	Statements []Statement
	// Comparisons set figures side by side in the table (the same
	// measures under different conditions); JSON has their figures.
	Comparisons []Comparison
}

// Comparison is a table of measures (rows) under conditions (columns).
type Comparison struct {
	// Title heads the table's first column.
	Title string
	// Columns name the conditions.
	Columns []string
	// Rows are the measures.
	Rows []ComparisonRow
}

// ComparisonRow is one measure of a Comparison, a cell per column.
type ComparisonRow struct {
	// Label names the measure.
	Label string
	// Cells are its values, formatted, in the order of the columns.
	Cells []string
}

// Param is one parameter of a scenario.
type Param struct {
	Key   string
	Value string
}

// Figure is one measurement.
type Figure struct {
	// Key names it in JSON (snake case, unit included: "p99_ms").
	Key string
	// Label names it in the table.
	Label string
	Value float64
	// Unit is shown after the value in the table.
	Unit string
	// PerCeiling: the table and JSON also give Value ÷ the ceiling's
	// commits/s (for commit rates).
	PerCeiling bool
}

// param appends a parameter.
func (r *Report) param(key string, value any) {
	var s string
	switch v := value.(type) {
	case time.Duration:
		s = v.String()
	default:
		s = fmt.Sprint(v)
	}
	r.Params = append(r.Params, Param{Key: key, Value: s})
}

// add appends a figure.
func (r *Report) add(key, label string, value float64, unit string) {
	r.Figures = append(r.Figures, Figure{Key: key, Label: label, Value: value, Unit: unit})
}

// addRate appends a commit rate, compared with the ceiling.
func (r *Report) addRate(key, label string, value float64) {
	r.Figures = append(r.Figures, Figure{Key: key, Label: label, Value: value, Unit: "/s", PerCeiling: true})
}

// note appends a note.
func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// latency appends p50, p99 and max of s under prefix.
func (r *Report) latency(key, label string, s latencySummary) {
	r.add(key+"_p50_ms", label+" p50", ms(s.P50), "ms")
	r.add(key+"_p99_ms", label+" p99", ms(s.P99), "ms")
	r.add(key+"_max_ms", label+" max", ms(s.Max), "ms")
}

// Figure returns the figure with key, if present.
func (r *Report) Figure(key string) (float64, bool) {
	for _, f := range r.Figures {
		if f.Key == key {
			return f.Value, true
		}
	}
	return 0, false
}

// windowFigures appends what a window measured of the database and the
// CPUs; per is the unit of work ("workflow", "heartbeat") and n how many.
func (r *Report) windowFigures(w *window, per string, n int) {
	if w.hasDB {
		secs := w.Elapsed().Seconds()
		r.addRate("commits_per_s", "PostgreSQL commits/s", float64(w.Commits)/secs)
		if n > 0 {
			r.add("commits_per_"+per, "commits per "+per, float64(w.Commits)/float64(n), "")
			r.add("write_xacts_per_"+per, "write transactions per "+per, float64(w.WriteXacts)/float64(n), "")
			r.add("wal_bytes_per_"+per, "WAL bytes per "+per, float64(w.WALBytes)/float64(n), "B")
		}
		if w.Rollbacks > 0 {
			r.add("rollbacks", "rollbacks", float64(w.Rollbacks), "")
		}
		if !w.e.InProcessServer() {
			r.note("commits: the database's, over the measurement and the %s the bench then waits for PostgreSQL to publish them (other traffic included); write transactions and WAL bytes are cluster-wide", statsIdleWait)
		}
	}
	if w.e.InProcessServer() {
		r.add("bench_process_cpu_pct", "server process CPU", w.cpuPercent(w.SelfCPU), "% of a core")
	}
	if len(w.procs) > 0 {
		r.add("worker_processes_cpu_pct", "worker processes CPU", w.cpuPercent(w.ProcCPU), "% of a core")
	}
	if w.hasPGCPU {
		r.add("postgres_cpu_pct", "PostgreSQL CPU", w.cpuPercent(w.PGCPU), "% of a core")
	}
}

// WriteTable prints the report as a table.
func (r *Report) WriteTable(out io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tether bench %s\n", r.Scenario)
	fmt.Fprintf(&b, "  setup:  %s\n", r.Setup.describe())
	if len(r.Params) > 0 {
		ps := make([]string, len(r.Params))
		for i, p := range r.Params {
			ps[i] = p.Key + "=" + p.Value
		}
		fmt.Fprintf(&b, "  params: %s\n", strings.Join(ps, " "))
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	hasCeiling := r.Ceiling != nil && r.Ceiling.CommitsPerSecond > 0
	if hasCeiling {
		fmt.Fprintln(tw, "  figure\tvalue\tunit\t÷ ceiling")
	} else {
		fmt.Fprintln(tw, "  figure\tvalue\tunit\t")
	}
	for _, f := range r.Figures {
		ratio := ""
		if f.PerCeiling && hasCeiling {
			ratio = fmt.Sprintf("%.3f", f.Value/r.Ceiling.CommitsPerSecond)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", f.Label, formatValue(f.Value), f.Unit, ratio)
	}
	if c := r.Ceiling; c != nil {
		fmt.Fprintf(tw, "  ceiling: single-row commits/s\t%s\t/s\t(%d conns, %s, p99 %.2f ms)\n",
			formatValue(c.CommitsPerSecond), c.Conns, c.Duration, c.P99Ms)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range r.Comparisons {
		b.WriteString("\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  %s\t%s\t\n", c.Title, strings.Join(c.Columns, "\t"))
		for _, row := range c.Rows {
			fmt.Fprintf(tw, "  %s\t%s\t\n", row.Label, strings.Join(row.Cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n  notes:\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	if len(r.Statements) > 0 {
		b.WriteString("\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  calls\ttotal ms\tmean ms\trows\t  statement (pg_stat_statements)")
		for _, s := range r.Statements {
			fmt.Fprintf(tw, "  %d\t%.0f\t%.3f\t%d\t  %s\n", s.Calls, s.TotalMs, s.MeanMs, s.Rows, s.Query)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := out.Write(b.Bytes())
	return err
}

func (s Setup) describe() string {
	var parts []string
	srv := "server " + s.Server
	if s.Server == "in-process" {
		srv += fmt.Sprintf(" (sweep %s, pool %d)", s.SweepInterval, s.MaxConns)
	}
	parts = append(parts, srv)
	db := "database " + s.Database
	if s.PostgreSQL != "" {
		db += " (PostgreSQL " + s.PostgreSQL + ")"
	}
	parts = append(parts, db, fmt.Sprintf("%d CPUs", s.CPUs), s.GoVersion)
	return strings.Join(parts, ", ")
}

// formatValue prints v with a precision that suits its size.
func formatValue(v float64) string {
	switch a := math.Abs(v); {
	case a == math.Trunc(a) && a < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

// MarshalJSON encodes the report as one object: scenario, setup, params,
// figures (key → value), ceiling, ceiling ratios (key → value ÷ ceiling
// commits/s) and notes.
func (r *Report) MarshalJSON() ([]byte, error) {
	params := make(map[string]string, len(r.Params))
	for _, p := range r.Params {
		params[p.Key] = p.Value
	}
	figures := make(map[string]float64, len(r.Figures))
	ratios := map[string]float64{}
	for _, f := range r.Figures {
		figures[f.Key] = round(f.Value)
		if f.PerCeiling && r.Ceiling != nil && r.Ceiling.CommitsPerSecond > 0 {
			ratios[f.Key] = round(f.Value / r.Ceiling.CommitsPerSecond)
		}
	}
	type out struct {
		Scenario      string             `json:"scenario"`
		Setup         Setup              `json:"setup"`
		Params        map[string]string  `json:"params"`
		Figures       map[string]float64 `json:"figures"`
		Ceiling       *CeilingResult     `json:"ceiling,omitempty"`
		CeilingRatios map[string]float64 `json:"ceiling_ratios,omitempty"`
		Notes         []string           `json:"notes,omitempty"`
		Statements    []Statement        `json:"statements,omitempty"`
	}
	return json.Marshal(out{r.Scenario, r.Setup, params, figures, r.Ceiling, ratios, r.Notes, r.Statements})
}

// round keeps four decimals, for readable JSON.
func round(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0 // JSON has no such numbers
	}
	return math.Round(v*1e4) / 1e4
}
