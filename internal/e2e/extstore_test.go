package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// memDriver is an in-memory converter.StorageDriver (an object store's
// stand-in, as samples-go's external-storage uses a mock S3).
type memDriver struct {
	name    string
	mu      sync.Mutex
	objects map[string]*common.Payload
	fail    bool
}

func (d *memDriver) Name() string { return d.name }
func (d *memDriver) Type() string { return "memory" }

func (d *memDriver) Store(_ converter.StorageDriverStoreContext, payloads []*common.Payload) ([]converter.StorageDriverClaim, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail {
		return nil, errors.New("bucket unavailable")
	}
	claims := make([]converter.StorageDriverClaim, len(payloads))
	for i, p := range payloads {
		key := fmt.Sprintf("obj-%d", len(d.objects)+1)
		d.objects[key] = p
		claims[i] = converter.StorageDriverClaim{ClaimData: map[string]string{"key": key}}
	}
	return claims, nil
}

func (d *memDriver) Retrieve(_ converter.StorageDriverRetrieveContext, claims []converter.StorageDriverClaim) ([]*common.Payload, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]*common.Payload, len(claims))
	for i, c := range claims {
		p, ok := d.objects[c.ClaimData["key"]]
		if !ok {
			return nil, fmt.Errorf("no object %q", c.ClaimData["key"])
		}
		out[i] = p
	}
	return out, nil
}

func (d *memDriver) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.objects)
}

// BigDoc is an activity whose result is far larger than the threshold.
func BigDoc(_ context.Context, n int) (string, error) { return strings.Repeat("large-", n), nil }

// LargePayloadFlow passes a large value from an activity to its result.
func LargePayloadFlow(ctx workflow.Context, n int) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var doc string
	if err := workflow.ExecuteActivity(ctx, BigDoc, n).Get(ctx, &doc); err != nil {
		return 0, err
	}
	return len(doc), nil
}

// Goal: with client.Options.ExternalStorage, a payload larger than the
// threshold goes to the driver and only a reference reaches the server
// (none of the large value is in PostgreSQL); the worker retrieves it and
// the workflow sees the value; small payloads stay inline.
func TestExternalStorage_LargePayloadsGoToTheDriver(t *testing.T) {
	e := newEnv(t)
	driver := &memDriver{name: "mem", objects: map[string]*common.Payload{}}
	c, err := client.Dial(client.Options{HostPort: e.addr, Logger: e.log,
		ExternalStorage: converter.ExternalStorage{Drivers: []converter.StorageDriver{driver}, PayloadSizeThreshold: 1024}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := worker.New(c, "extstore", worker.Options{})
	w.RegisterWorkflow(LargePayloadFlow)
	w.RegisterActivity(BigDoc)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "ext-1", TaskQueue: "extstore"}, LargePayloadFlow, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := run.Get(ctx, &n); err != nil || n != 60000 {
		t.Fatalf("result %d, %v", n, err)
	}
	if driver.count() != 1 {
		t.Fatalf("the driver holds %d payloads, want 1 (the activity's result)", driver.count())
	}
	rows := e.rowsOf("ext-1")
	if strings.Contains(rows, "large-large-") {
		t.Fatalf("the large value is in the database:\n%.2000s", rows)
	}
	if !strings.Contains(rows, "json/protobuf") && !strings.Contains(rows, "anNvbi9wcm90b2J1Zg==") {
		t.Fatalf("no storage reference in the database:\n%.2000s", rows)
	}

	// The small result travels inline: a client without the driver reads it.
	var raw any
	plain := e.c
	if err := plain.GetWorkflow(ctx, "ext-1", "").Get(ctx, &raw); err != nil || raw != float64(60000) {
		t.Fatalf("the small result travels inline: %v, %v", raw, err)
	}
}

// Goal: a driver that fails to store fails the activity attempt with the
// driver's error, named, and nothing is half-written.
func TestExternalStorage_DriverFailureIsNamed(t *testing.T) {
	e := newEnv(t)
	driver := &memDriver{name: "mem", objects: map[string]*common.Payload{}, fail: true}
	_, err := client.Dial(client.Options{HostPort: e.addr, ExternalStorage: converter.ExternalStorage{
		Drivers: []converter.StorageDriver{driver, &memDriver{name: "other"}}}})
	if err == nil || !strings.Contains(err.Error(), "DriverSelector") {
		t.Fatalf("two drivers without a selector: %v", err)
	}
	c, err := client.Dial(client.Options{HostPort: e.addr, Logger: e.log,
		ExternalStorage: converter.ExternalStorage{Drivers: []converter.StorageDriver{driver}, PayloadSizeThreshold: 1024}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "ext-2", TaskQueue: "extstore"}, "LargePayloadFlow", strings.Repeat("x", 4096))
	if err == nil || !strings.Contains(err.Error(), `storage driver "mem" store failed: bucket unavailable`) {
		t.Fatalf("start with a failing driver: %v", err)
	}
	if _, err := e.c.Describe(ctx, "ext-2"); err == nil {
		t.Fatal("the workflow was started though its input could not be stored")
	}
}
