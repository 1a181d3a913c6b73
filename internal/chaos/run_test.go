package chaos

import (
	"testing"
	"time"
)

func TestBlame(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	faults := []FaultRecord{
		{Kind: FaultKillWorker, Victim: "w1", Start: at(10), End: at(10)},
		{Kind: FaultKillServer, Start: at(20), End: at(22)},
		{Kind: FaultRestartDB, Start: at(30), End: at(31)},
		{Kind: FaultPauseWorker, Victim: "w2", Start: at(40), End: at(44)},
	}
	cases := []struct {
		name string
		x    ExtraExecution
		want string
	}{
		{"died on the killed worker", ExtraExecution{PrevStart: at(9), PrevWorker: "w1-abc"}, FaultKillWorker},
		{"another worker is not the kill's", ExtraExecution{PrevStart: at(9), PrevEnd: at(21), PrevWorker: "w3-abc"}, FaultKillServer},
		{"w10 is not w1", ExtraExecution{PrevStart: at(9.5), PrevEnd: at(9.8), PrevWorker: "w10-abc"}, ""},
		{"report during the server outage", ExtraExecution{PrevStart: at(19), PrevEnd: at(21), PrevWorker: "w3-abc"}, FaultKillServer},
		{"fetched just before the crash", ExtraExecution{PrevStart: at(28.5), PrevEnd: at(29.5), PrevWorker: "w3-abc"}, FaultRestartDB},
		{"paused mid-execution", ExtraExecution{PrevStart: at(39), PrevEnd: at(45), PrevWorker: "w2-abc"}, FaultPauseWorker},
		{"ended before any fault", ExtraExecution{PrevStart: at(1), PrevEnd: at(2), PrevWorker: "w3-abc"}, ""},
	}
	for _, c := range cases {
		if got := blame(faults, &c.x); got != c.want {
			t.Errorf("%s: blamed %q, want %q", c.name, got, c.want)
		}
	}
}
