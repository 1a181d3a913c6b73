package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// API keys are "tk_<id>_<secret>": a 16-hex-digit id, by which the key is
// found, and a 256-bit random secret in unpadded base64url, of which only
// the SHA-256 is stored.
const (
	apiKeyPrefix   = "tk_"
	apiKeyIDLen    = 16
	apiKeySecretLn = 43 // base64url of 32 bytes, unpadded
	// APIKeyLen is the length of every API key.
	APIKeyLen = len(apiKeyPrefix) + apiKeyIDLen + 1 + apiKeySecretLn
)

// ParseAPIKey splits a key into its id and the SHA-256 of its secret. It
// reports false for anything that is not shaped as a key.
func ParseAPIKey(key string) (id string, secretHash [32]byte, ok bool) {
	if len(key) != APIKeyLen || key[:len(apiKeyPrefix)] != apiKeyPrefix || key[len(apiKeyPrefix)+apiKeyIDLen] != '_' {
		return "", secretHash, false
	}
	id = key[len(apiKeyPrefix) : len(apiKeyPrefix)+apiKeyIDLen]
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", secretHash, false
		}
	}
	return id, sha256.Sum256([]byte(key[len(apiKeyPrefix)+apiKeyIDLen+1:])), true
}

// newAPIKey returns a fresh key, its id and the hash of its secret.
func newAPIKey() (key, id string, secretHash [32]byte) {
	var idb [apiKeyIDLen / 2]byte
	var secret [32]byte
	// crypto/rand.Read never fails (it panics if the system has no
	// randomness source).
	_, _ = rand.Read(idb[:])
	_, _ = rand.Read(secret[:])
	id = hex.EncodeToString(idb[:])
	s := base64.RawURLEncoding.EncodeToString(secret[:])
	return apiKeyPrefix + id + "_" + s, id, sha256.Sum256([]byte(s))
}

func toAPIKey(k gen.ApiKey) api.APIKey {
	ns := api.AllNamespaces
	if k.Namespace != nil {
		ns = *k.Namespace
	}
	return api.APIKey{ID: k.ID, Namespace: ns, Role: k.Role, Name: k.Name, CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt}
}

func toNamespace(n gen.Namespace) api.Namespace {
	out := api.Namespace{Name: n.Name, Description: n.Description, CreatedAt: n.CreatedAt}
	if n.Retention.Valid {
		d := api.Duration(time.Duration(n.Retention.Microseconds)*time.Microsecond +
			time.Duration(n.Retention.Days)*24*time.Hour + time.Duration(n.Retention.Months)*30*24*time.Hour)
		out.Retention = &d
	}
	return out
}

func retentionMS(d *api.Duration) *int64 {
	if d == nil {
		return nil
	}
	v := ms(d.D())
	return &v
}

// CreateAPIKey stores a new key of role in namespace ns (api.AllNamespaces:
// every namespace) and returns it with its secret, which is not stored and
// cannot be read again. storage.ErrNotFound: no such namespace.
func (s *Store) CreateAPIKey(ctx context.Context, p *storage.CreateAPIKeyParams) (api.CreateAPIKeyResponse, error) {
	ns, role, name := p.Namespace, p.Role, p.Name
	key, id, hash := newAPIKey()
	row := gen.CreateAPIKeyParams{ID: id, Role: role, SecretHash: hash[:], Name: name}
	if ns != api.AllNamespaces {
		row.Namespace = &ns
	}
	k, err := gen.New(s.pool).CreateAPIKey(ctx, row)
	if err != nil {
		if isForeignKeyViolation(err) {
			return api.CreateAPIKeyResponse{}, storage.ErrNotFound
		}
		return api.CreateAPIKeyResponse{}, fmt.Errorf("create api key: %w", err)
	}
	return api.CreateAPIKeyResponse{APIKey: toAPIKey(k), Key: key}, nil
}

// LookupAPIKey returns the key of that id (storage.ErrNotFound).
func (s *Store) LookupAPIKey(ctx context.Context, id string) (storage.KeyRecord, error) {
	k, err := gen.New(s.pool).GetAPIKey(ctx, id)
	if noRows(err) {
		return storage.KeyRecord{}, storage.ErrNotFound
	}
	if err != nil {
		return storage.KeyRecord{}, fmt.Errorf("look up api key: %w", err)
	}
	r := storage.KeyRecord{ID: k.ID, Namespace: api.AllNamespaces, Role: k.Role, Revoked: k.RevokedAt != nil, Owner: "key:" + k.ID}
	if k.Namespace != nil {
		r.Namespace = *k.Namespace
	}
	copy(r.SecretHash[:], k.SecretHash)
	return r, nil
}

// listAPIKeys lists the keys of namespace ns (at most 1000, newest first),
// and with withGlobal the keys valid in every namespace too.
func (s *Store) listAPIKeys(ctx context.Context, ns string, withGlobal bool) ([]api.APIKey, error) {
	ks, err := gen.New(s.pool).ListAPIKeys(ctx, gen.ListAPIKeysParams{Namespace: &ns, WithGlobal: withGlobal})
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	out := make([]api.APIKey, 0, len(ks))
	for _, k := range ks {
		out = append(out, toAPIKey(k))
	}
	return out, nil
}

// RevokeAPIKey revokes key id of namespace ns (and, withGlobal, a key
// valid in every namespace). storage.ErrNotFound: no such valid key.
func (s *Store) RevokeAPIKey(ctx context.Context, p *storage.RevokeAPIKeyParams) error {
	ns, id, withGlobal := p.Namespace, p.ID, p.WithGlobal
	n, err := gen.New(s.pool).RevokeAPIKey(ctx, gen.RevokeAPIKeyParams{ID: id, Namespace: &ns, WithGlobal: withGlobal})
	if err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	if n == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// CreateNamespace creates the namespace req describes
// (storage.ErrNamespaceExists).
func (s *Store) CreateNamespace(ctx context.Context, req api.CreateNamespaceRequest) (api.Namespace, error) {
	n, err := gen.New(s.pool).CreateNamespace(ctx, gen.CreateNamespaceParams{Name: req.Name,
		Description: req.Description, RetentionMs: retentionMS(req.Retention)})
	if noRows(err) {
		return api.Namespace{}, storage.ErrNamespaceExists
	}
	if err != nil {
		return api.Namespace{}, fmt.Errorf("create namespace: %w", err)
	}
	return toNamespace(n), nil
}

// getNamespace describes a namespace (storage.ErrNotFound).
func (s *Store) getNamespace(ctx context.Context, name string) (api.Namespace, error) {
	n, err := gen.New(s.pool).GetNamespace(ctx, name)
	if noRows(err) {
		return api.Namespace{}, storage.ErrNotFound
	}
	if err != nil {
		return api.Namespace{}, fmt.Errorf("get namespace: %w", err)
	}
	return toNamespace(n), nil
}

// ListNamespaces lists every namespace in name order, or the one p.Name
// names (getNamespace).
func (s *Store) ListNamespaces(ctx context.Context, p *storage.ListNamespacesParams) ([]api.Namespace, error) {
	if p.Name != "" {
		n, err := s.getNamespace(ctx, p.Name)
		if err != nil {
			return nil, err
		}
		return []api.Namespace{n}, nil
	}
	ns, err := gen.New(s.pool).ListNamespaces(ctx)
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	out := make([]api.Namespace, 0, len(ns))
	for _, n := range ns {
		out = append(out, toNamespace(n))
	}
	return out, nil
}

// DeleteNamespace deletes an empty namespace, its worker sessions and its
// API keys, in one transaction. storage.ErrNotFound: no such namespace;
// storage.ErrNamespaceNotEmpty: it still holds workflow instances (delete them
// first).
func (s *Store) DeleteNamespace(ctx context.Context, name string) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return fmt.Errorf("delete namespace: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	q := gen.New(tx)
	// Lock the row, then the instances in SHARE mode, which waits for the
	// starts in flight and holds back new ones until the commit: a start
	// is either seen by the check below (and the namespace is not
	// deleted) or comes after the commit and finds the namespace gone
	// (StartInstances), whatever a server's namespace cache says.
	if _, err := q.LockNamespace(ctx, name); err != nil {
		if noRows(err) {
			return storage.ErrNotFound
		}
		return fmt.Errorf("delete namespace: %w", err)
	}
	if err := q.LockInstancesForNamespaceDelete(ctx); err != nil {
		return fmt.Errorf("delete namespace: %w", err)
	}
	has, err := q.NamespaceHasInstances(ctx, name)
	if err != nil {
		return fmt.Errorf("delete namespace: %w", err)
	}
	if has {
		return storage.ErrNamespaceNotEmpty
	}
	if err := q.DeleteNamespaceWorkers(ctx, name); err != nil {
		return fmt.Errorf("delete namespace: %w", err)
	}
	// What else the namespace held goes with it: a namespace created
	// again under its name starts empty.
	if err := q.DeleteNamespaceSchedules(ctx, name); err != nil {
		return fmt.Errorf("delete namespace: schedules: %w", err)
	}
	if err := q.DeleteNamespaceSearchAttributes(ctx, name); err != nil {
		return fmt.Errorf("delete namespace: search attributes: %w", err)
	}
	n, err := q.DeleteNamespace(ctx, name)
	if err != nil {
		return fmt.Errorf("delete namespace: %w", err)
	}
	if n == 0 {
		return storage.ErrNotFound
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("delete namespace: %w", err)
	}
	return nil
}

// isForeignKeyViolation reports whether err is PostgreSQL's
// foreign_key_violation (23503).
func isForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23503"
}

// countValidAPIKeys counts the keys not revoked, of every namespace.
func (s *Store) countValidAPIKeys(ctx context.Context) (int64, error) {
	n, err := gen.New(s.pool).CountValidAPIKeys(ctx)
	if err != nil {
		return 0, fmt.Errorf("count api keys: %w", err)
	}
	return n, nil
}

// workerOwner returns the owner of a worker session ("" when it has none);
// storage.ErrNotFound when there is no such session.
func (s *Store) workerOwner(ctx context.Context, ns, workerID string) (string, error) {
	o, err := gen.New(s.pool).WorkerOwner(ctx, gen.WorkerOwnerParams{Namespace: ns, WorkerID: workerID})
	if noRows(err) {
		return "", storage.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("worker owner: %w", err)
	}
	return o, nil
}

// UpdateNamespace sets the fields req gives (storage.ErrNotFound).
func (s *Store) UpdateNamespace(ctx context.Context, p *storage.UpdateNamespaceParams) (api.Namespace, error) {
	name, req := p.Name, p.Request
	n, err := gen.New(s.pool).UpdateNamespace(ctx, gen.UpdateNamespaceParams{Name: name,
		Description: req.Description, RetentionMs: retentionMS(req.Retention)})
	if noRows(err) {
		return api.Namespace{}, storage.ErrNotFound
	}
	if err != nil {
		return api.Namespace{}, fmt.Errorf("update namespace: %w", err)
	}
	return toNamespace(n), nil
}

// purgeClosed runs the retention job: it deletes closed workflow instances
// older than their namespace's retention, with their history, messages and
// attempts, namespace by namespace (every statement names one namespace:
// docs/architecture.md, "Distributed by namespace"), in batches of at most
// batch instances (one transaction each, a few set-based statements), at
// most maxBatches of them per namespace. It returns how many instances it
// deleted.
func (s *Store) purgeClosed(ctx context.Context, batch int32, maxBatches int) (int, error) {
	nss, err := gen.New(s.pool).ListNamespaces(ctx)
	if err != nil {
		return 0, fmt.Errorf("purge closed workflows: %w", err)
	}
	total := 0
	for _, n := range nss {
		retention := toNamespace(n).Retention
		if retention == nil {
			continue
		}
		purged, err := s.purgeNamespace(ctx, n.Name, ms(retention.D()), batch, maxBatches)
		total += purged
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// purgeNamespace is purgeClosed for namespace ns, whose retention is
// keepMS milliseconds.
func (s *Store) purgeNamespace(ctx context.Context, ns string, keepMS int64, batch int32, maxBatches int) (int, error) {
	total := 0
	for range maxBatches {
		n := 0
		err := s.inTx(ctx, func(t *txn) error {
			rows, err := t.q.TakeExpiredInstances(ctx, gen.TakeExpiredInstancesParams{Namespace: ns, RetentionMs: keepMS, MaxRows: batch})
			if err != nil {
				return err
			}
			n = len(rows)
			if n == 0 {
				return nil
			}
			ids := make([]string, len(rows))
			for i, r := range rows {
				ids[i] = r.InstanceID
			}
			if err := t.w.DeleteInstancesHistory(ctx, gen.DeleteInstancesHistoryParams{Namespace: ns, InstanceIds: ids}); err != nil {
				return err
			}
			if err := t.w.DeleteInstanceMessages(ctx, gen.DeleteInstanceMessagesParams{Namespace: ns, InstanceIds: ids}); err != nil {
				return err
			}
			if err := t.w.DeleteInstancesAttempts(ctx, gen.DeleteInstancesAttemptsParams{Namespace: ns, InstanceIds: ids}); err != nil {
				return err
			}
			if err := t.w.DeleteInstancesUpdates(ctx, gen.DeleteInstancesUpdatesParams{Namespace: ns, InstanceIds: ids}); err != nil {
				return err
			}
			return t.w.DeleteInstances(ctx, gen.DeleteInstancesParams{Namespace: ns, InstanceIds: ids})
		})
		if err != nil {
			return total, fmt.Errorf("purge closed workflows of %s: %w", ns, err)
		}
		total += n
		if n < int(batch) {
			break
		}
	}
	return total, nil
}
