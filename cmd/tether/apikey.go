package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server"
	"github.com/tetherhq/tether/server/store"
)

// runAPIKey is `tether apikey create|list|revoke`: it talks to the
// database directly, so that it can make the first key of a server that
// requires one.
func runAPIKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: tether apikey create|list|revoke [flags]")
		return errUsage
	}
	fs := flag.NewFlagSet("tether apikey "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := fs.String("database-url", os.Getenv(envDatabaseURL), "PostgreSQL URL ($"+envDatabaseURL+")")
	ns := fs.String("namespace", "default", `namespace of the key ("*": every namespace)`)
	var role, name, id string
	switch args[0] {
	case "create":
		fs.StringVar(&role, "role", "", "worker, client or admin")
		fs.StringVar(&name, "name", "", "who or what holds the key (free text)")
	case "list":
	case "revoke":
		fs.StringVar(&id, "id", "", "the key's id (tk_<id>_...)")
	default:
		fmt.Fprintf(stderr, "tether apikey: unknown action %q: use create, list or revoke\n", args[0])
		return errUsage
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *dbURL == "" {
		return fmt.Errorf("no database: set --database-url or $%s", envDatabaseURL)
	}
	logger, err := newLogger(stderr, "warn", "text")
	if err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, *dbURL)
	if err != nil {
		return fmt.Errorf("connect to the database: %w", err)
	}
	defer pool.Close()
	if err := server.Migrate(ctx, pool, logger); err != nil {
		return err
	}
	st := store.New(pool, store.Options{})
	switch args[0] {
	case "create":
		switch role {
		case api.RoleWorker, api.RoleClient, api.RoleAdmin:
		default:
			fmt.Fprintln(stderr, "--role must be worker, client or admin")
			return errUsage
		}
		k, err := st.CreateAPIKey(ctx, *ns, role, name)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no namespace %q", *ns)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "created API key %s (role %s, namespace %s); it is shown once:\n", k.ID, k.Role, k.Namespace)
		fmt.Fprintln(stdout, k.Key)
	case "list":
		keys, err := st.ListAPIKeys(ctx, *ns, *ns == api.AllNamespaces)
		if err != nil {
			return err
		}
		for _, k := range keys {
			state := "valid"
			if k.RevokedAt != nil {
				state = "revoked " + k.RevokedAt.UTC().Format("2006-01-02T15:04:05Z")
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.Namespace, k.Role, state, k.Name)
		}
	case "revoke":
		if err := st.RevokeAPIKey(ctx, *ns, id, *ns == api.AllNamespaces); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no valid key %q in namespace %q", id, *ns)
			}
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", id)
	}
	return nil
}
