package engine

import (
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/tetherhq/tether/api"
)

// Bounds of a schedule spec (api.ScheduleSpec).
const (
	// MinScheduleInterval is the shortest interval of a spec.
	MinScheduleInterval = time.Second
	// MaxScheduleInterval is the longest interval of a spec.
	MaxScheduleInterval = 366 * 24 * time.Hour
	// MaxScheduleJitter is the largest jitter of a spec.
	MaxScheduleJitter = 24 * time.Hour
)

// SpecError is a spec that is not valid; Field names its JSON field
// (relative to the spec, e.g. "cron_expressions[1]").
type SpecError struct {
	// Field is the JSON field at fault.
	Field string
	// Message says what is wrong with it.
	Message string
}

func (e *SpecError) Error() string { return e.Field + ": " + e.Message }

// Spec is a parsed api.ScheduleSpec: Next gives its slots.
type Spec struct {
	crons     []cron.Schedule
	calendars []*calendar
	skip      []*calendar
	intervals []api.ScheduleIntervalSpec
	jitter    time.Duration
	loc       *time.Location
}

// ParseSpec parses and checks a spec (a *SpecError when it is not valid).
// A spec without calendars, cron expressions and intervals is valid and
// never fires.
func ParseSpec(s api.ScheduleSpec) (*Spec, error) {
	p := &Spec{loc: time.UTC, jitter: s.Jitter.D(), intervals: s.Intervals}
	if s.TimeZoneName != "" {
		loc, err := time.LoadLocation(s.TimeZoneName)
		if err != nil {
			return nil, &SpecError{Field: "time_zone_name", Message: fmt.Sprintf("unknown time zone %q", s.TimeZoneName)}
		}
		p.loc = loc
	}
	for i, c := range s.CronExpressions {
		sched, err := cron.ParseStandard(c)
		if err != nil {
			return nil, &SpecError{Field: fmt.Sprintf("cron_expressions[%d]", i), Message: "invalid cron expression: " + err.Error()}
		}
		p.crons = append(p.crons, sched)
	}
	for i, c := range s.Calendars {
		cal, err := parseCalendar(fmt.Sprintf("calendars[%d]", i), c, p.loc)
		if err != nil {
			return nil, err
		}
		p.calendars = append(p.calendars, cal)
	}
	for i, c := range s.Skip {
		cal, err := parseCalendar(fmt.Sprintf("skip[%d]", i), c, p.loc)
		if err != nil {
			return nil, err
		}
		p.skip = append(p.skip, cal)
	}
	for i, iv := range s.Intervals {
		every, off := iv.Every.D(), iv.Offset.D()
		if every < MinScheduleInterval || every > MaxScheduleInterval {
			return nil, &SpecError{Field: fmt.Sprintf("intervals[%d].every", i), Message: fmt.Sprintf("must be between %s and %s", MinScheduleInterval, MaxScheduleInterval)}
		}
		if off < 0 || off >= every {
			return nil, &SpecError{Field: fmt.Sprintf("intervals[%d].offset", i), Message: "must be at least 0 and less than every"}
		}
	}
	if p.jitter < 0 || p.jitter > MaxScheduleJitter {
		return nil, &SpecError{Field: "jitter", Message: fmt.Sprintf("must be between 0 and %s", MaxScheduleJitter)}
	}
	return p, nil
}

// ErrNoSlot is the answer of Next for a spec that has no slot after the
// time given.
var ErrNoSlot = errors.New("schedule has no next time")

// maxSkipped is how many skipped times in a row Next passes over before it
// says the spec has no next slot.
const maxSkipped = 10000

// Next is the spec's first slot strictly after after (UTC): the earliest
// time of its calendars, cron expressions and intervals that no skip
// calendar matches.
func (p *Spec) Next(after time.Time) (time.Time, error) {
	for range maxSkipped {
		t, err := p.nextAny(after)
		if err != nil {
			return t, err
		}
		if !p.skipped(t) {
			return t, nil
		}
		after = t
	}
	return time.Time{}, ErrNoSlot
}

// skipped reports whether a skip calendar matches t.
func (p *Spec) skipped(t time.Time) bool {
	for _, c := range p.skip {
		if c.matches(t) {
			return true
		}
	}
	return false
}

// nextAny is the first time strictly after after of any part of the spec,
// skip calendars aside.
func (p *Spec) nextAny(after time.Time) (time.Time, error) {
	var best time.Time
	for _, c := range p.calendars {
		t := c.next(after)
		if !t.IsZero() && (best.IsZero() || t.Before(best)) {
			best = t
		}
	}
	for _, c := range p.crons {
		t := c.Next(after.In(p.loc))
		if !t.IsZero() && (best.IsZero() || t.Before(best)) {
			best = t
		}
	}
	for _, iv := range p.intervals {
		every, off := iv.Every.D(), iv.Offset.D()
		// The slots are epoch + off + k*every: the first k with a slot
		// strictly after after.
		since := after.Sub(time.Unix(0, 0).Add(off))
		k := since / every
		if since >= 0 {
			k++
		}
		t := time.Unix(0, 0).Add(off).Add(k * every)
		for !t.After(after) {
			t = t.Add(every)
		}
		if best.IsZero() || t.Before(best) {
			best = t
		}
	}
	if best.IsZero() {
		return time.Time{}, ErrNoSlot
	}
	return best.UTC(), nil
}

// Jitter is the delay of slot: the same on every replica for the same
// schedule, below the spec's jitter.
func (p *Spec) Jitter(scheduleID string, slot time.Time) time.Duration {
	if p.jitter <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(scheduleID))
	_, _ = h.Write([]byte(slot.UTC().Format(time.RFC3339Nano)))
	return time.Duration(h.Sum64() % uint64(p.jitter))
}

// NextN is the spec's first n slots strictly after after.
func (p *Spec) NextN(after time.Time, n int) []time.Time {
	out := make([]time.Time, 0, n)
	for len(out) < n {
		t, err := p.Next(after)
		if err != nil {
			break
		}
		out = append(out, t)
		after = t
	}
	return out
}

// ScheduleWorkflowID is the workflow id of a slot: the prefix, "-" and the
// slot's time in RFC 3339 (UTC, fractional seconds only when it has some).
func ScheduleWorkflowID(prefix string, slot time.Time) string {
	return prefix + "-" + slot.UTC().Format(time.RFC3339Nano)
}
