package engine

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/tetherhq/tether/api"
)

// Bounds of the years of a calendar spec (api.ScheduleCalendarSpec.Year).
const (
	// MinCalendarYear is the first year a calendar spec may name.
	MinCalendarYear = 1970
	// MaxCalendarYear is the last year a calendar spec may name.
	MaxCalendarYear = 9999
)

// domDowAnd is robfig/cron's star bit: set on the day-of-month or
// day-of-week field, it makes a day match only when both fields match
// (Temporal's semantics for a calendar spec) instead of either.
const domDowAnd = 1 << 63

// calendar is a parsed api.ScheduleCalendarSpec: its fields as the bit sets
// of robfig/cron's SpecSchedule, and its years.
type calendar struct {
	spec  cron.SpecSchedule
	years []api.ScheduleRange // empty: every year
}

// calendarField is the bounds and default of one field of a calendar spec.
type calendarField struct {
	name     string
	min, max int
	all      bool // the default is every value (else min)
}

var (
	fieldSecond = calendarField{"second", 0, 59, false}
	fieldMinute = calendarField{"minute", 0, 59, false}
	fieldHour   = calendarField{"hour", 0, 23, false}
	fieldDom    = calendarField{"day_of_month", 1, 31, true}
	fieldMonth  = calendarField{"month", 1, 12, true}
	fieldYear   = calendarField{"year", MinCalendarYear, MaxCalendarYear, true}
	fieldDow    = calendarField{"day_of_week", 0, 6, true}
)

// checkRanges checks the ranges of a field; prefix is the calendar's JSON
// path (e.g. "calendars[0]").
func checkRanges(prefix string, f calendarField, rs []api.ScheduleRange) error {
	for i, r := range rs {
		field := fmt.Sprintf("%s.%s[%d]", prefix, f.name, i)
		if r.Start < f.min || r.Start > f.max {
			return &SpecError{Field: field + ".start", Message: fmt.Sprintf("must be between %d and %d", f.min, f.max)}
		}
		if r.End != 0 && (r.End < r.Start || r.End > f.max) {
			return &SpecError{Field: field + ".end", Message: fmt.Sprintf("must be 0 or between start and %d", f.max)}
		}
		if r.Step < 0 {
			return &SpecError{Field: field + ".step", Message: "must be at least 0"}
		}
	}
	return nil
}

// rangeBits is the bit set of the values of rs (bit v for value v), or of
// the field's default when rs is empty.
func rangeBits(f calendarField, rs []api.ScheduleRange) uint64 {
	if len(rs) == 0 {
		if f.all {
			rs = []api.ScheduleRange{{Start: f.min, End: f.max}}
		} else {
			rs = []api.ScheduleRange{{Start: f.min}}
		}
	}
	var bits uint64
	for _, r := range rs {
		end, step := rangeEnd(r), max(r.Step, 1)
		for v := r.Start; v <= end; v += step {
			bits |= 1 << uint(v)
		}
	}
	return bits
}

// rangeEnd is the last value of r (End, or Start when End is 0).
func rangeEnd(r api.ScheduleRange) int {
	if r.End == 0 {
		return r.Start
	}
	return r.End
}

// inRanges reports whether v is a value of rs (every value when rs is
// empty).
func inRanges(v int, rs []api.ScheduleRange) bool {
	if len(rs) == 0 {
		return true
	}
	for _, r := range rs {
		if v >= r.Start && v <= rangeEnd(r) && (v-r.Start)%max(r.Step, 1) == 0 {
			return true
		}
	}
	return false
}

// parseCalendar checks and parses a calendar spec; prefix is its JSON path.
func parseCalendar(prefix string, c api.ScheduleCalendarSpec, loc *time.Location) (*calendar, error) {
	for _, f := range []struct {
		f  calendarField
		rs []api.ScheduleRange
	}{
		{fieldSecond, c.Second}, {fieldMinute, c.Minute}, {fieldHour, c.Hour},
		{fieldDom, c.DayOfMonth}, {fieldMonth, c.Month}, {fieldYear, c.Year}, {fieldDow, c.DayOfWeek},
	} {
		if err := checkRanges(prefix, f.f, f.rs); err != nil {
			return nil, err
		}
	}
	return &calendar{
		spec: cron.SpecSchedule{
			Second:   rangeBits(fieldSecond, c.Second),
			Minute:   rangeBits(fieldMinute, c.Minute),
			Hour:     rangeBits(fieldHour, c.Hour),
			Dom:      rangeBits(fieldDom, c.DayOfMonth) | domDowAnd,
			Month:    rangeBits(fieldMonth, c.Month),
			Dow:      rangeBits(fieldDow, c.DayOfWeek) | domDowAnd,
			Location: loc,
		},
		years: c.Year,
	}, nil
}

// next is the calendar's first time strictly after after (zero: none).
func (c *calendar) next(after time.Time) time.Time {
	loc := c.spec.Location
	cur, misses := after, 0
	// robfig/cron looks at most five years ahead: each turn either
	// returns, or jumps to the next allowed year. A calendar whose days
	// never come (February 30) misses twice in a row.
	for range 1000 {
		t := c.spec.Next(cur)
		y := cur.In(loc).Year()
		if !t.IsZero() {
			if inRanges(t.Year(), c.years) {
				return t
			}
			y, misses = t.Year(), 0
		} else {
			if misses++; misses == 2 {
				return time.Time{}
			}
			y += 5
		}
		ny, ok := c.nextYear(y)
		if !ok {
			return time.Time{}
		}
		cur = time.Date(ny, time.January, 1, 0, 0, 0, 0, loc).Add(-time.Nanosecond)
	}
	return time.Time{}
}

// nextYear is the first allowed year after y.
func (c *calendar) nextYear(y int) (int, bool) {
	if len(c.years) == 0 {
		return y + 1, y+1 <= MaxCalendarYear
	}
	best := 0
	for _, r := range c.years {
		step, end := max(r.Step, 1), rangeEnd(r)
		v := r.Start
		if v <= y {
			v += ((y-r.Start)/step + 1) * step
		}
		if v <= end && (best == 0 || v < best) {
			best = v
		}
	}
	return best, best != 0
}

// matches reports whether t (in the calendar's location) is one of its
// times, to the second.
func (c *calendar) matches(t time.Time) bool {
	t = t.In(c.spec.Location)
	s := &c.spec
	return s.Second&(1<<uint(t.Second())) != 0 &&
		s.Minute&(1<<uint(t.Minute())) != 0 &&
		s.Hour&(1<<uint(t.Hour())) != 0 &&
		s.Dom&(1<<uint(t.Day())) != 0 &&
		s.Month&(1<<uint(t.Month())) != 0 &&
		s.Dow&(1<<uint(t.Weekday())) != 0 &&
		inRanges(t.Year(), c.years)
}
