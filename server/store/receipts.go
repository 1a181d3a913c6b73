package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// Receipts (migration 00007): a report — an activity attempt's complete or
// fail, a turn's ack — leaves its answer keyed by its lock token, written in
// the report's own transaction. A worker whose answer was lost (the server
// or its database went down after the commit) sends the report again; the
// lock token is gone by then, and instead of storage.ErrLockLost the retry gets the
// first answer (without the eager work it handed out, which stays locked
// for the worker until its lock expires). Receipts are kept receiptKeep.
//
// A receipt holds the digest of what its report said (migration 00020):
// only a report with the same digest — the same report, retried — gets the
// first answer. Another report of the same token (a second completion with
// a different result, a fail after a complete, a different turn ack) gets
// storage.ErrDuplicateReport: it was not recorded, and its sender must know.
const (
	receiptComplete = "complete"
	receiptFail     = "fail"
	receiptTurn     = "turn"

	// receiptKeep is how long a receipt is kept.
	receiptKeep = 15 * time.Minute
)

// receipt is one receipt of InsertReceipts.
type receipt struct {
	LockToken uuid.UUID
	Kind      string
	Answer    json.RawMessage
	// Digest is reportDigest of what the report said.
	Digest []byte
}

// reportDigest is the digest of a report: the SHA-256 of the parts of what
// it said, each preceded by its length (so that parts never run into each
// other).
func reportDigest(parts ...[]byte) []byte {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		l := uint64(len(p))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write(p)
	}
	return h.Sum(nil)
}

// writeReceipts writes the receipts of a group of reports with the
// transaction's next round trip.
func writeReceipts(ctx context.Context, t *txn, ns string, rs []receipt) error {
	if len(rs) == 0 {
		return nil
	}
	p := gen.InsertReceiptsParams{Namespace: ns, LockTokens: make([]uuid.UUID, len(rs)), Kinds: make([]string, len(rs)),
		Answers: make([][]byte, len(rs)), Digests: make([][]byte, len(rs))}
	for k, r := range rs {
		p.LockTokens[k], p.Kinds[k], p.Answers[k], p.Digests[k] = r.LockToken, r.Kind, r.Answer, r.Digest
	}
	return t.w.InsertReceipts(ctx, p)
}

// newReceipt is the receipt of a report of kind, whose digest is digest,
// with answer v.
func newReceipt(tok uuid.UUID, kind string, digest []byte, v any) receipt {
	return receipt{LockToken: tok, Kind: kind, Answer: mustJSON(v), Digest: digest}
}

// repeatedReport answers a report that found its lock gone (err is
// storage.ErrLockLost): when the report of kind with lock token tok and digest
// digest was applied already, its first answer is decoded into out and nil
// returned; when another report of the token was (another kind or
// digest), storage.ErrDuplicateReport is returned; otherwise err, as it is.
func (s *Store) repeatedReport(ctx context.Context, ns string, tok uuid.UUID, kind string, digest []byte, err error, out any) error {
	if !errors.Is(err, storage.ErrLockLost) {
		return err
	}
	r, qerr := gen.New(s.pool).GetReceipt(ctx, gen.GetReceiptParams{LockToken: tok, Namespace: ns})
	if noRows(qerr) {
		return err
	}
	if qerr != nil {
		return fmt.Errorf("receipt: %w", qerr)
	}
	if r.Kind != kind || (r.Digest != nil && !bytes.Equal(r.Digest, digest)) {
		return fmt.Errorf("%w: the token's first report (%s) was recorded, and this one differs from it", storage.ErrDuplicateReport, r.Kind)
	}
	if jerr := json.Unmarshal(r.Answer, out); jerr != nil {
		return fmt.Errorf("receipt: %w", jerr)
	}
	return nil
}

// sweepReceipts deletes the receipts older than receiptKeep.
func (s *Store) sweepReceipts(ctx context.Context, ns string, _ *storage.SweepResult) error {
	if _, err := gen.New(s.pool).DeleteOldReceipts(ctx, gen.DeleteOldReceiptsParams{Namespace: ns, KeepMs: ms(receiptKeep), MaxRows: s.opts.SweepBatch}); err != nil {
		return fmt.Errorf("sweep receipts: %w", err)
	}
	return nil
}
