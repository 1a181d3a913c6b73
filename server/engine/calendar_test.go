package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/engine"
)

// rng is a ScheduleRange.
func rng(start, end, step int) api.ScheduleRange {
	return api.ScheduleRange{Start: start, End: end, Step: step}
}

// slots is the first n slots of spec after at, in RFC 3339.
func slots(t *testing.T, spec api.ScheduleSpec, at time.Time, n int) []string {
	t.Helper()
	p, err := engine.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range p.NextN(at, n) {
		out = append(out, s.Format(time.RFC3339))
	}
	return out
}

func wantSlots(t *testing.T, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("slots %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("slots %v, want %v", got, want)
		}
	}
}

// The slots of calendar specs: the defaults (second, minute and hour 0;
// every day, month and year), ranges, steps, day of month AND day of week,
// years, the time zone, the union with cron expressions and intervals, and
// skip calendars.
func TestCalendarSpecNext(t *testing.T) {
	fri := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC) // a Friday

	t.Run("weekdays at nine", func(t *testing.T) {
		got := slots(t, api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{
			Hour: []api.ScheduleRange{rng(9, 0, 0)}, DayOfWeek: []api.ScheduleRange{rng(1, 5, 0)},
		}}}, fri, 3)
		wantSlots(t, got, "2026-11-30T09:00:00Z", "2026-12-01T09:00:00Z", "2026-12-02T09:00:00Z")
	})
	t.Run("every 15 minutes in hours 9 to 17", func(t *testing.T) {
		got := slots(t, api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{
			Minute: []api.ScheduleRange{rng(0, 59, 15)}, Hour: []api.ScheduleRange{rng(9, 17, 0)},
		}}}, time.Date(2026, 11, 27, 17, 20, 0, 0, time.UTC), 4)
		wantSlots(t, got, "2026-11-27T17:30:00Z", "2026-11-27T17:45:00Z", "2026-11-28T09:00:00Z", "2026-11-28T09:15:00Z")
	})
	t.Run("a step from an offset, and a list", func(t *testing.T) {
		got := slots(t, api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{
			Second: []api.ScheduleRange{rng(5, 0, 0), rng(10, 50, 20)}, Minute: []api.ScheduleRange{rng(0, 59, 0)}, Hour: []api.ScheduleRange{rng(0, 23, 0)},
		}}}, fri, 5)
		wantSlots(t, got, "2026-11-27T12:00:05Z", "2026-11-27T12:00:10Z", "2026-11-27T12:00:30Z", "2026-11-27T12:00:50Z", "2026-11-27T12:01:05Z")
	})
	t.Run("year filter", func(t *testing.T) {
		got := slots(t, api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{
			Month: []api.ScheduleRange{rng(3, 0, 0)}, DayOfMonth: []api.ScheduleRange{rng(1, 0, 0)},
			Year: []api.ScheduleRange{rng(2028, 2040, 4), rng(2030, 0, 0)},
		}}}, fri, 4)
		wantSlots(t, got, "2028-03-01T00:00:00Z", "2030-03-01T00:00:00Z", "2032-03-01T00:00:00Z", "2036-03-01T00:00:00Z")
		// A year far ahead (beyond robfig/cron's five years).
		got = slots(t, api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{Year: []api.ScheduleRange{rng(2100, 0, 0)}}}}, fri, 1)
		wantSlots(t, got, "2100-01-01T00:00:00Z")
		// Past years only: no slot.
		p, err := engine.ParseSpec(api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{Year: []api.ScheduleRange{rng(2020, 2025, 0)}}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Next(fri); !errors.Is(err, engine.ErrNoSlot) {
			t.Fatalf("past years: %v", err)
		}
	})
	t.Run("day of month and day of week both match", func(t *testing.T) {
		got := slots(t, api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{
			DayOfMonth: []api.ScheduleRange{rng(13, 0, 0)}, DayOfWeek: []api.ScheduleRange{rng(5, 0, 0)},
		}}}, fri, 2)
		wantSlots(t, got, "2027-08-13T00:00:00Z", "2028-10-13T00:00:00Z")
	})
	t.Run("a day that never comes", func(t *testing.T) {
		p, err := engine.ParseSpec(api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{
			Month: []api.ScheduleRange{rng(2, 0, 0)}, DayOfMonth: []api.ScheduleRange{rng(30, 0, 0)},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Next(fri); !errors.Is(err, engine.ErrNoSlot) {
			t.Fatalf("February 30: %v", err)
		}
	})
	t.Run("time zone", func(t *testing.T) {
		got := slots(t, api.ScheduleSpec{TimeZoneName: "Europe/Paris", Calendars: []api.ScheduleCalendarSpec{{
			Hour: []api.ScheduleRange{rng(9, 0, 0)},
		}}}, time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC), 2)
		wantSlots(t, got, "2026-03-29T07:00:00Z", "2026-03-30T07:00:00Z") // CEST from the 29th
	})
	t.Run("union with cron and intervals, less skip", func(t *testing.T) {
		got := slots(t, api.ScheduleSpec{
			Calendars:       []api.ScheduleCalendarSpec{{Hour: []api.ScheduleRange{rng(9, 0, 0)}, Minute: []api.ScheduleRange{rng(30, 0, 0)}}},
			CronExpressions: []string{"0 10 * * *"},
			Intervals:       []api.ScheduleIntervalSpec{{Every: api.Duration(24 * time.Hour), Offset: api.Duration(11 * time.Hour)}},
			Skip:            []api.ScheduleCalendarSpec{{Hour: []api.ScheduleRange{rng(0, 23, 0)}, Minute: []api.ScheduleRange{rng(0, 59, 0)}, DayOfWeek: []api.ScheduleRange{rng(0, 0, 0), rng(6, 0, 0)}}},
		}, fri, 4)
		wantSlots(t, got, "2026-11-30T09:30:00Z", "2026-11-30T10:00:00Z", "2026-11-30T11:00:00Z", "2026-12-01T09:30:00Z")
	})
}

// A calendar range out of bounds is a SpecError naming the field.
func TestCalendarSpecInvalid(t *testing.T) {
	for _, c := range []struct {
		spec  api.ScheduleSpec
		field string
	}{
		{api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{Second: []api.ScheduleRange{rng(60, 0, 0)}}}}, "calendars[0].second[0].start"},
		{api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{}, {Minute: []api.ScheduleRange{rng(0, 0, 0), rng(-1, 0, 0)}}}}, "calendars[1].minute[1].start"},
		{api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{Hour: []api.ScheduleRange{rng(9, 24, 0)}}}}, "calendars[0].hour[0].end"},
		{api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{Hour: []api.ScheduleRange{rng(9, 8, 0)}}}}, "calendars[0].hour[0].end"},
		{api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{DayOfMonth: []api.ScheduleRange{rng(0, 0, 0)}}}}, "calendars[0].day_of_month[0].start"},
		{api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{Month: []api.ScheduleRange{rng(13, 0, 0)}}}}, "calendars[0].month[0].start"},
		{api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{DayOfWeek: []api.ScheduleRange{rng(1, 7, 0)}}}}, "calendars[0].day_of_week[0].end"},
		{api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{Year: []api.ScheduleRange{rng(1969, 0, 0)}}}}, "calendars[0].year[0].start"},
		{api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{Minute: []api.ScheduleRange{rng(0, 59, -1)}}}}, "calendars[0].minute[0].step"},
		{api.ScheduleSpec{Skip: []api.ScheduleCalendarSpec{{Hour: []api.ScheduleRange{rng(25, 0, 0)}}}}, "skip[0].hour[0].start"},
	} {
		_, err := engine.ParseSpec(c.spec)
		var se *engine.SpecError
		if !errors.As(err, &se) || se.Field != c.field {
			t.Errorf("%s: got %v", c.field, err)
		}
	}
}
