package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/pflag"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/server"
	"github.com/tetherhq/tether/server/storage"
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
	if wantsHelp(args[:1]) {
		fmt.Fprintln(stderr, "usage: tether apikey create|list|revoke [flags]  (tether apikey <action> -h: its flags)")
		return pflag.ErrHelp
	}
	fs := newFlagSet("tether apikey "+args[0], stderr)
	dbURL := fs.String("database-url", os.Getenv(envDatabaseURL), "PostgreSQL URL ($"+envDatabaseURL+")")
	ns := fs.String("namespace", "default", `namespace of the key ("*": every namespace)`)
	viaAPI := fs.Bool("via-api", false, "go through the server's REST API (an admin key) instead of the database")
	address := fs.String("address", envOr(envAddress, defaultAddress), "with --via-api: the server's base URL ($"+envAddress+")")
	apiKey := fs.String("api-key", os.Getenv(envAPIKeyCLI), "with --via-api: an admin key ($"+envAPIKeyCLI+")")
	var role, name, id string
	switch args[0] {
	case "create":
		fs.StringVar(&role, "role", "", "worker, client, reader or admin")
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
	if args[0] == "create" {
		switch role {
		case api.RoleWorker, api.RoleClient, api.RoleReader, api.RoleAdmin:
		default:
			fmt.Fprintln(stderr, "--role must be worker, client, reader or admin")
			return errUsage
		}
	}
	if *viaAPI {
		return apiKeyViaAPI(ctx, args[0], client.Options{Address: *address, Namespace: *ns, APIKey: *apiKey,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, role, name, id, stdout, stderr)
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
		k, err := st.CreateAPIKey(ctx, &storage.CreateAPIKeyParams{Namespace: *ns, Role: role, Name: name})
		if errors.Is(err, storage.ErrNotFound) {
			return fmt.Errorf("no namespace %q", *ns)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "created API key %s (role %s, namespace %s); it is shown once:\n", k.ID, k.Role, k.Namespace)
		fmt.Fprintln(stdout, k.Key)
	case "list":
		keys, err := st.ListAPIKeys(ctx, &storage.ListAPIKeysParams{Namespace: *ns, WithGlobal: *ns == api.AllNamespaces})
		if err != nil {
			return err
		}
		printAPIKeys(stdout, keys.Keys)
	case "revoke":
		if err := st.RevokeAPIKey(ctx, &storage.RevokeAPIKeyParams{Namespace: *ns, ID: id, WithGlobal: *ns == api.AllNamespaces}); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return fmt.Errorf("no valid key %q in namespace %q", id, *ns)
			}
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", id)
	}
	return nil
}

// printAPIKeys writes keys one a line: id, namespace, role, state, name.
func printAPIKeys(w io.Writer, keys []api.APIKey) {
	for _, k := range keys {
		state := "valid"
		if k.RevokedAt != nil {
			state = "revoked " + k.RevokedAt.UTC().Format("2006-01-02T15:04:05Z")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.Namespace, k.Role, state, k.Name)
	}
}

// apiKeyViaAPI is `tether apikey … --via-api`: the same actions through the
// server's REST API, with an admin key. Its errors carry the exit codes of
// the API commands.
func apiKeyViaAPI(ctx context.Context, action string, opts client.Options, role, name, id string, stdout, stderr io.Writer) error {
	cl, err := client.New(opts)
	if err != nil {
		return usageErrorf("--address: %w", err)
	}
	switch action {
	case "create":
		k, err := cl.CreateAPIKey(ctx, role, name)
		if err != nil {
			return apiError(err)
		}
		fmt.Fprintf(stderr, "created API key %s (role %s, namespace %s); it is shown once:\n", k.ID, k.Role, k.Namespace)
		fmt.Fprintln(stdout, k.Key)
	case "list":
		keys, err := cl.ListAPIKeys(ctx)
		if err != nil {
			return apiError(err)
		}
		printAPIKeys(stdout, keys)
	case "revoke":
		if err := cl.RevokeAPIKey(ctx, id); err != nil {
			return apiError(err)
		}
		fmt.Fprintf(stdout, "revoked %s\n", id)
	}
	return nil
}
