package e2e

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// secret is the text no table may hold in clear when the client encrypts.
const secret = "card-4111-1111"

// aesGCMCodec is samples-go's encryption codec: AES-GCM over the whole
// payload, the key id in the metadata. It fails to encode a payload that
// holds "poison".
type aesGCMCodec struct {
	keyID string
	key   []byte
}

func (c *aesGCMCodec) gcm() (cipher.AEAD, error) {
	block, err := aes.NewCipher(c.key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (c *aesGCMCodec) Encode(payloads []*common.Payload) ([]*common.Payload, error) {
	g, err := c.gcm()
	if err != nil {
		return nil, err
	}
	out := make([]*common.Payload, len(payloads))
	for i, p := range payloads {
		if bytes.Contains(p.Data, []byte("poison")) {
			return nil, errors.New("aes codec refuses a poisoned payload")
		}
		b, err := p.Marshal()
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, g.NonceSize())
		_, _ = rand.Read(nonce)
		out[i] = &common.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte("binary/encrypted"), "encryption-key-id": []byte(c.keyID)},
			Data:     g.Seal(nonce, nonce, b, nil),
		}
	}
	return out, nil
}

func (c *aesGCMCodec) Decode(payloads []*common.Payload) ([]*common.Payload, error) {
	g, err := c.gcm()
	if err != nil {
		return nil, err
	}
	out := make([]*common.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.Metadata[converter.MetadataEncoding]) != "binary/encrypted" {
			out[i] = p
			continue
		}
		if id := string(p.Metadata["encryption-key-id"]); id != c.keyID {
			return nil, fmt.Errorf("no key %q", id)
		}
		if len(p.Data) < g.NonceSize() {
			return nil, errors.New("ciphertext too short")
		}
		b, err := g.Open(nil, p.Data[:g.NonceSize()], p.Data[g.NonceSize():], nil)
		if err != nil {
			return nil, err
		}
		out[i] = &common.Payload{}
		if err := out[i].Unmarshal(b); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func encryptingClient(t *testing.T, e *env, keyID string) *client.TetherClient {
	t.Helper()
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(),
		&aesGCMCodec{keyID: keyID, key: []byte("0123456789abcdef0123456789abcdef")})
	c, err := client.DialContext(context.Background(), client.Options{Address: e.addr, Logger: e.log, DataConverter: dc})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Payment is the secret-bearing input of the encrypted workflow.
type Payment struct {
	Card   string `json:"card"`
	Amount int    `json:"amount"`
}

// ChargeCard returns a receipt that repeats the card (a poisoned one for
// a negative amount).
func ChargeCard(ctx context.Context, p Payment) (string, error) {
	if p.Amount < 0 {
		return "poison receipt", nil
	}
	return fmt.Sprintf("charged %d to %s", p.Amount, p.Card), nil
}

// EncryptedFlow charges the card, records a side effect and waits for an
// approval signal; a query answers its state.
func EncryptedFlow(ctx workflow.Context, p Payment) (string, error) {
	state := "charging " + p.Card
	if err := workflow.SetQueryHandler(ctx, "state", func() (string, error) { return state, nil }); err != nil {
		return "", err
	}
	if err := workflow.SetQueryHandler(ctx, "poisoned", func() (string, error) { return "poison", nil }); err != nil {
		return "", err
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &workflow.RetryPolicy{MaximumAttempts: 1},
	})
	var receipt string
	if err := workflow.ExecuteActivity(ctx, ChargeCard, p).Get(ctx, &receipt); err != nil {
		return "", err
	}
	var note string
	if err := workflow.SideEffect(ctx, func(workflow.Context) any { return "noted " + p.Card }).Get(&note); err != nil {
		return "", err
	}
	var child string
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID + "-child"})
	if err := workflow.ExecuteChildWorkflow(cctx, EncryptedChild, p).Get(ctx, &child); err != nil {
		return "", err
	}
	tip := ""
	if err := workflow.SetUpdateHandler(ctx, "tip", func(ctx workflow.Context, t string) (string, error) {
		tip = t
		return "tip " + t + " on " + p.Card, nil
	}); err != nil {
		return "", err
	}
	state = "waiting " + p.Card
	var approver string
	workflow.GetSignalChannel(ctx, "approve").Receive(ctx, &approver)
	return receipt + "; " + note + "; " + child + "; " + tip + "; approved by " + approver, nil
}

// EncryptedChild repeats the card.
func EncryptedChild(_ workflow.Context, p Payment) (string, error) { return "child saw " + p.Card, nil }

// PoisonHeartbeat heartbeats details the codec refuses, then waits for
// its cancellation.
func PoisonHeartbeat(ctx context.Context) error {
	if err := activity.RecordHeartbeat(ctx, "poison"); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

// HeartbeatFlow runs PoisonHeartbeat once.
func HeartbeatFlow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 20 * time.Second,
		RetryPolicy:         &workflow.RetryPolicy{MaximumAttempts: 1},
	})
	return workflow.ExecuteActivity(ctx, PoisonHeartbeat).Get(ctx, nil)
}

func registerEncrypted(w worker.Worker) error {
	return errors.Join(w.AddWorkflow(EncryptedFlow), w.AddWorkflow(EncryptedChild), w.AddActivity(ChargeCard),
		w.AddWorkflow(HeartbeatFlow), w.AddActivity(PoisonHeartbeat))
}

// rowsOf returns the rows of the tables that hold an instance's payloads
// (and the stored report answers), as PostgreSQL prints them.
func (e *env) rowsOf(id string) string {
	e.t.Helper()
	var all strings.Builder
	for _, table := range []string{"instances", "history", "orchestrator_queue", "worker_queue", "queries", "updates", "report_receipts"} {
		where := " WHERE instance_id = $1"
		if table == "report_receipts" {
			where = " WHERE $1 <> ''" // the answers of every report (a fresh database)
		}
		rows, err := e.pool.Query(context.Background(), "SELECT t::text FROM "+table+" t"+where, id)
		if err != nil {
			e.t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				e.t.Fatal(err)
			}
			all.WriteString(table + ": " + s + "\n")
		}
		if err := rows.Err(); err != nil {
			e.t.Fatal(err)
		}
	}
	return all.String()
}

func TestEncryptingCodecKeepsPayloadsEncrypted(t *testing.T) {
	e := newEnv(t)
	c := encryptingClient(t, e, "k1")
	e.startWorkerOn(c, "enc", testOptions(), registerEncrypted)
	ctx := context.Background()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "enc-1", TaskQueue: "enc", Memo: map[string]any{"card": secret}},
		EncryptedFlow, Payment{Card: secret, Amount: 12})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the workflow to wait for its approval", func() bool {
		v, err := c.QueryWorkflow(ctx, "enc-1", "", "state")
		var s string
		return err == nil && v.Get(&s) == nil && s == "waiting "+secret
	})
	// A query answer the codec refuses: the query fails with its error.
	if _, err := c.QueryWorkflow(ctx, "enc-1", "", "poisoned"); err == nil || !strings.Contains(err.Error(), "PayloadCodecError") || !strings.Contains(err.Error(), "refuses a poisoned payload") {
		t.Fatalf("poisoned query answered %v", err)
	}
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: "enc-1", UpdateName: "tip",
		Args: []any{"tip-" + secret}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		t.Fatal(err)
	}
	var tipAns string
	if err := h.Get(ctx, &tipAns); err != nil || tipAns != "tip tip-"+secret+" on "+secret {
		t.Fatalf("update answered %q, %v", tipAns, err)
	}
	if err := c.SignalWorkflow(ctx, "enc-1", "", "approve", "ops-"+secret); err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 30*time.Second)
	want := "charged 12 to " + secret + "; noted " + secret + "; child saw " + secret + "; tip-" + secret + "; approved by ops-" + secret
	if err != nil || got != want {
		t.Fatalf("result %q, %v; want %q", got, err, want)
	}

	// PostgreSQL holds each payload encrypted, in its envelope.
	rows := e.rowsOf("enc-1") + e.rowsOf("enc-1-child")
	if !strings.Contains(rows, "instances: (default,enc-1-child") || !strings.Contains(rows, "updates: (default,enc-1,") {
		t.Fatalf("no child instance or update in:\n%s", rows)
	}
	if strings.Contains(rows, secret) || strings.Contains(rows, "4111") {
		t.Fatalf("a payload is stored in clear:\n%s", rows)
	}
	var input, res, memo string
	if err := e.pool.QueryRow(ctx, "SELECT input::text, result::text, memo::text FROM instances WHERE instance_id = 'enc-1'").Scan(&input, &res, &memo); err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{input, res, memo} {
		if !strings.Contains(col, converter.EnvelopeKey) || !strings.Contains(col, "YmluYXJ5L2VuY3J5cHRlZA==") {
			t.Fatalf("not an encrypted envelope: %s", col)
		}
	}
	if n := strings.Count(rows, converter.EnvelopeKey); n < 8 {
		t.Fatalf("%d envelopes in the instance's rows, want input, memo, activity input and result, marker, signal, result…:\n%s", n, rows)
	}

	// A client without the codec reads the envelope, not the value: the
	// server never decrypts.
	raw, err := result[json.RawMessage](t, e.c.GetWorkflow(ctx, "enc-1", ""), 5*time.Second)
	if err != nil || !bytes.Contains(raw, []byte(converter.EnvelopeKey)) || bytes.Contains(raw, []byte(secret)) {
		t.Fatalf("result through a plain client: %s, %v", raw, err)
	}
	// The encrypting client decodes what it reads: the memo, the history.
	d, err := c.Describe(ctx, "enc-1")
	if err != nil || !strings.Contains(string(d.Memo), secret) {
		t.Fatalf("memo through the encrypting client: %s %v", d.Memo, err)
	}
	hist, err := c.History(ctx, "enc-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if last := hist.Events[len(hist.Events)-1]; last.Kind != api.EventWorkflowCompleted || !strings.Contains(string(last.Result), secret) {
		t.Fatalf("last event %s %s", last.Kind, last.Result)
	}
}

func TestCodecFailureFailsTheAttempt(t *testing.T) {
	e := newEnv(t)
	c := encryptingClient(t, e, "k1")
	e.startWorkerOn(c, "enc", testOptions(), registerEncrypted)
	ctx := context.Background()
	// A start whose input the codec refuses fails in the client, named,
	// and sends nothing.
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "enc-refused", TaskQueue: "enc"},
		EncryptedFlow, Payment{Card: "poison", Amount: 1})
	var ce *converter.PayloadCodecError
	if !errors.As(err, &ce) || !ce.Encode || ce.Field != "input" {
		t.Fatalf("start with a refused input: %v", err)
	}
	if _, err := c.Describe(ctx, "enc-refused"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("the refused start reached the server: %v", err)
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "enc-poison", TaskQueue: "enc"},
		EncryptedFlow, Payment{Card: "c", Amount: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = result[string](t, run, 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "PayloadCodecError") || !strings.Contains(err.Error(), "refuses a poisoned payload") {
		t.Fatalf("workflow error %v; want the activity's PayloadCodecError", err)
	}
	h := e.history("enc-poison")
	failed := false
	for _, ev := range h {
		if ev.Kind == api.EventActivityFailed && ev.Error != nil && ev.Error.Type == api.ErrorTypePayloadCodec {
			failed = true
		}
	}
	if !failed || count(h, api.EventActivityCompleted, "") != 0 {
		t.Fatalf("no ActivityFailed of type %s in the history", api.ErrorTypePayloadCodec)
	}
}

func TestCodecFailureOfHeartbeatDetailsFailsTheAttempt(t *testing.T) {
	e := newEnv(t)
	c := encryptingClient(t, e, "k1")
	e.startWorkerOn(c, "enc", testOptions(), registerEncrypted)
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "enc-hb", TaskQueue: "enc"}, HeartbeatFlow)
	if err != nil {
		t.Fatal(err)
	}
	_, err = result[json.RawMessage](t, run, 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "PayloadCodecError: encode details") || !strings.Contains(err.Error(), "refuses a poisoned payload") {
		t.Fatalf("workflow error %v; want the heartbeat's PayloadCodecError", err)
	}
}

func TestCodecFailureFailsTheTurn(t *testing.T) {
	e := newEnv(t)
	starter := encryptingClient(t, e, "k1")
	// The worker has another key: it cannot read the workflow's input.
	e.startWorkerOn(encryptingClient(t, e, "k2"), "enc", testOptions(), registerEncrypted)
	if _, err := starter.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "enc-key", TaskQueue: "enc"},
		EncryptedFlow, Payment{Card: secret, Amount: 1}); err != nil {
		t.Fatal(err)
	}
	var lastErr string
	waitFor(t, 20*time.Second, "the turn to fail with the codec's error", func() bool {
		var s *string
		if err := e.pool.QueryRow(context.Background(), "SELECT last_task_error::text FROM instances WHERE instance_id = 'enc-key'").Scan(&s); err != nil {
			t.Fatal(err)
		}
		if s != nil {
			lastErr = *s
		}
		return strings.Contains(lastErr, api.ErrorTypePayloadCodec)
	})
	if !strings.Contains(lastErr, `no key \"k1\"`) && !strings.Contains(lastErr, `no key "k1"`) {
		t.Fatalf("last task error %s; want the codec's own error", lastErr)
	}
	d, err := e.c.Describe(context.Background(), "enc-key")
	if err != nil || d.Status != api.StatusRunning {
		t.Fatalf("workflow %+v, %v; want it running (the turn is retried)", d, err)
	}
}
