package server

import "github.com/tetherhq/tether/server/engine"

// checkCron adds a problem naming cron_schedule when spec is set and is not
// a valid cron schedule.
func (b *binder) checkCron(spec string) {
	if spec == "" {
		return
	}
	if _, err := engine.ParseCron(spec); err != nil {
		b.add("cron_schedule", "%v", err)
	}
}
