package wf_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// channelFlow exercises buffered and unbuffered channels between workflow
// goroutines within one turn.
func channelFlow(ctx workflow.Context) ([]string, error) {
	var log []string
	buf := workflow.NewBufferedChannel(ctx, 2)
	log = append(log, fmt.Sprint("async:", buf.SendAsync(1), buf.SendAsync(2), buf.SendAsync(3)))
	var n int
	ok, more := buf.ReceiveAsyncWithMoreFlag(&n)
	log = append(log, fmt.Sprint("recv:", n, ok, more, buf.Len()))

	// A producer blocks on the full channel until the consumer takes.
	done := workflow.Go(ctx, func(ctx workflow.Context) error {
		for i := 10; i < 13; i++ {
			buf.Send(ctx, i)
		}
		buf.Close()
		return nil
	})
	var got []int
	for {
		var v int
		if !buf.Receive(ctx, &v) {
			break // closed
		}
		got = append(got, v)
	}
	if err := done.Get(ctx, nil); err != nil {
		return nil, err
	}
	ok, more = buf.ReceiveAsyncWithMoreFlag(&n)
	log = append(log, fmt.Sprint("got:", got), fmt.Sprint("closed:", ok, more))

	// Unbuffered: SendAsync fails without a waiting receiver; Send waits
	// for one.
	unbuf := workflow.NewChannel(ctx)
	log = append(log, fmt.Sprint("unbuffered async:", unbuf.SendAsync("x")))
	sent := false
	workflow.Go(ctx, func(ctx workflow.Context) {
		unbuf.Send(ctx, "hello")
		sent = true
	})
	var s string
	unbuf.Receive(ctx, &s)
	if err := workflow.Await(ctx, func() bool { return sent }); err != nil {
		return nil, err
	}
	log = append(log, "unbuffered:"+s)
	return log, nil
}

func TestChannels(t *testing.T) {
	res, err := turnOf(t, channelFlow, nil, hist(started))
	if err != nil {
		t.Fatal(err)
	}
	got := describe(res.Commands)
	want := []string{`complete:["async:true true false","recv:1 true true 1","got:[2 10 11 12]","closed:false false","unbuffered async:false","unbuffered:hello"]`}
	if !slices.Equal(got, want) {
		t.Fatalf("commands\n got %v\nwant %v", got, want)
	}
}

// ReceiveKeepsWaiting: as in Temporal, Receive on a cancelled context goes
// on waiting for a value; a value that does not decode is skipped.
func ReceiveKeepsWaiting(ctx workflow.Context) (string, error) {
	ch := workflow.GetSignalChannel(ctx, "n")
	var n int
	more := ch.Receive(ctx, &n) // the workflow is cancelled meanwhile
	if ctx.Err() == nil {
		return "", errors.New("not cancelled")
	}
	return fmt.Sprint(n, more), nil
}

func TestReceiveOnCancelledContextWaits(t *testing.T) {
	d := newDriver(t, ReceiveKeepsWaiting, true)
	s := newSim(t, nil)
	d.turn(s)
	s.cancel("stop")
	if res := d.turn(s); len(res.Commands) != 0 {
		t.Fatalf("the cancellation ended Receive: %v", commandTypes(res.Commands))
	}
	s.signal("n", "not a number")
	if res := d.turn(s); len(res.Commands) != 0 {
		t.Fatalf("Receive took a value that does not decode: %v", commandTypes(res.Commands))
	}
	s.signal("n", 7)
	d.turn(s)
	if got := resultOf[string](t, s.final); got != "7 true" {
		t.Fatalf("result %q", got)
	}
}
