package storage

import "errors"

// ErrScheduleExists is the error of a create whose schedule id is taken.
var ErrScheduleExists = errors.New("schedule exists")

// MaxBackfillSlots is the most slots one backfill fires.
const MaxBackfillSlots = 1000

// ScheduleFilter selects a page of schedules.
type ScheduleFilter struct {
	// Limit defaults to 100 and is capped at 1000.
	Limit int32
	// PageToken continues a previous page ("": the first).
	PageToken string
}
