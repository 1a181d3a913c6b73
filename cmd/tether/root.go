package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes of the tether command (docs/cli.md). Scripts may rely on them.
const (
	// exitOK: the command did what was asked.
	exitOK = 0
	// exitFailure: the command failed for another reason (the server could
	// not start, a workflow's outcome was failed, canceled or terminated…).
	exitFailure = 1
	// exitUsage: bad command line (unknown command or flag, wrong arguments,
	// an argument the server rejected as invalid).
	exitUsage = 2
	// exitNotFound: the workflow, worker, namespace or key does not exist.
	exitNotFound = 3
	// exitConflict: the server refused the request in the current state
	// (already running, not running, namespace exists or in use…).
	exitConflict = 4
	// exitAuth: no API key, or one that may not do this (401, 403).
	exitAuth = 5
	// exitServer: the server failed (5xx, rate limited) or could not be
	// reached.
	exitServer = 6
)

// exitError ends a command with an exit code; err (when not nil) is
// printed on stderr.
type exitError struct {
	code int
	err  error
}

// Error implements error.
func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// Unwrap returns the error printed (nil when none).
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is a bad command line, explained.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// Environment variables of the API commands (their flags win).
const (
	envAddress   = "TETHER_ADDRESS"
	envNamespace = "TETHER_NAMESPACE"
	envAPIKeyCLI = "TETHER_API_KEY"
)

// defaultAddress is the server the API commands talk to by default.
const defaultAddress = "http://127.0.0.1:7070"

// cli holds what the commands of one invocation share: the output streams
// and the global flags (the context is the commands', cmd.Context()).
type cli struct {
	stdout io.Writer
	stderr io.Writer
	// address, namespace, apiKey and output are the global flags.
	address   string
	namespace string
	apiKey    string
	output    string
	// codecEndpoint is the workflow commands' --codec-endpoint ("" when
	// payloads are shown as stored).
	codecEndpoint string
}

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := &cli{stdout: stdout, stderr: stderr}
	root := c.rootCommand()
	if len(args) == 0 {
		// cobra's usage without its own "Usage:" block, under ours.
		_, rest, _ := strings.Cut(root.UsageString(), "\n\n")
		fmt.Fprint(stderr, "Usage: tether <command> [flags]\n\n", rest)
		return exitUsage
	}
	if args[0] == "-help" {
		// The Go flag spelling the hand-rolled dispatch accepted.
		args = append([]string{"--help"}, args[1:]...)
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	path := "tether"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", path, ee.err)
		}
		if ee.code == exitUsage && ee.err != nil {
			fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", path)
		}
		return ee.code
	}
	// cobra's own errors: unknown command or flag, wrong number of
	// arguments.
	fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for usage.\n", path, err, path)
	return exitUsage
}

// rootCommand builds the command tree.
func (c *cli) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "tether",
		Short: "Tether, a durable workflow engine on PostgreSQL.",
		Long: `Tether, a durable workflow engine on PostgreSQL.

The server commands (server, dev, migrate, apikey, bench, chaos) run the
engine; the API commands (workflow, worker, task-queue, namespace) talk to a
running server over its REST API: --address, --namespace and --api-key say
which one (or $TETHER_ADDRESS, $TETHER_NAMESPACE, $TETHER_API_KEY).

Exit codes: 0 ok, 1 failure, 2 usage, 3 not found, 4 conflict,
5 unauthorized or forbidden, 6 server or transport error (docs/cli.md).`,
		Example: `  tether dev
  tether workflow list
  tether workflow describe order-42 --output json`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// Arguments that name no command are an unknown command.
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: err}
	})
	pf := root.PersistentFlags()
	pf.StringVar(&c.address, "address", envOr(envAddress, defaultAddress), "the server's base URL ($"+envAddress+")")
	pf.StringVarP(&c.namespace, "namespace", "n", envOr(envNamespace, "default"), "the namespace ($"+envNamespace+")")
	pf.StringVar(&c.apiKey, "api-key", os.Getenv(envAPIKeyCLI), "the API key sent as a bearer token ($"+envAPIKeyCLI+")")
	pf.StringVarP(&c.output, "output", "o", "table", "output format: table (for people) or json (for scripts)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if c.output != "table" && c.output != "json" {
			return usageErrorf("--output must be table or json, not %q", c.output)
		}
		return nil
	}

	root.AddGroup(&cobra.Group{ID: "server", Title: "Server Commands:"},
		&cobra.Group{ID: "api", Title: "API Commands (talk to a running server):"})
	for _, cmd := range c.serverCommands() {
		cmd.GroupID = "server"
		root.AddCommand(cmd)
	}
	for _, cmd := range []*cobra.Command{c.workflowCommand(), c.workerCommand(), c.taskQueueCommand(), c.namespaceCommand(), c.scheduleCommand(), c.searchAttributeCommand(), c.batchCommand(), c.operatorCommand()} {
		cmd.GroupID = "api"
		root.AddCommand(cmd)
	}
	root.SetHelpCommandGroupID("api")
	root.SetCompletionCommandGroupID("api")
	return root
}

// legacyRun is a command that parses its own flags with a pflag.FlagSet.
type legacyRun func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// serverCommands are the commands that run the engine. They parse their
// flags with pflag themselves (cobra passes them the arguments): the
// flags of server, dev and migrate are also environment variables
// (parseEnvFlags).
func (c *cli) serverCommands() []*cobra.Command {
	return []*cobra.Command{
		c.legacy("server", "serve the HTTP/JSON API (needs TETHER_DATABASE_URL)",
			`  TETHER_DATABASE_URL=postgres://tether@db/tether tether server --addr :7070
  tether server --database-url postgres://tether@db/tether --tls-cert /etc/tether/cert.pem --tls-key /etc/tether/key.pem
  TETHER_MAX_CONNS=40 TETHER_LOG_FORMAT=json tether server

Every flag is also an environment variable: TETHER_ and the flag's name in
upper snake case (--max-conns is TETHER_MAX_CONNS); a flag given on the
command line wins over its variable.`, runServer),
		c.legacy("dev", "serve on localhost:7070 with a throwaway PostgreSQL (or TETHER_DATABASE_URL)",
			`  tether dev
  tether dev --addr :9000 --log-level debug

Every flag is also an environment variable (--log-level is TETHER_LOG_LEVEL);
a flag given on the command line wins.`, runDev),
		c.legacy("migrate", "apply the database migrations and exit",
			`  tether migrate --database-url postgres://tether@db/tether
  TETHER_DATABASE_URL=postgres://tether@db/tether tether migrate`, runMigrate),
		c.legacy("apikey", "create, list or revoke API keys (in the database, or --via-api)",
			`  tether apikey create --role admin --namespace '*' --name ops
  tether apikey list --namespace default
  tether apikey revoke --id 0123456789abcdef
  tether apikey list --via-api --address http://tether:7070`, runAPIKey),
		c.legacy("bench", "run a load scenario and print its figures",
			`  tether bench throughput --duration 30s
  tether bench ceiling --database-url postgres://… --json`, runBench),
		c.legacy("chaos", "run the chaos suite: faults injected into real processes, invariants checked",
			`  tether chaos --config small`, runChaos),
		c.legacy("healthcheck", "exit 0 when the server on this host is ready (a container's HEALTHCHECK)",
			`  tether healthcheck
  TETHER_ADDR=:9000 tether healthcheck
  tether healthcheck --url https://tether.internal:7070/readyz`, runHealthcheck),
		c.legacy("version", "print the version and exit", `  tether version`, runVersion),
	}
}

// legacy wraps a command that parses its own flags. Its --help prints the
// command's summary and examples, then its flags.
func (c *cli) legacy(name, short, example string, fn legacyRun) *cobra.Command {
	return &cobra.Command{
		Use:                name + " [flags]",
		Short:              short,
		Example:            example,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			out := c.stderr
			if wantsHelp(args) {
				// Help goes to stdout, the flags' defaults too.
				out = c.stdout
				fmt.Fprintf(c.stdout, "%s\n\nUsage:\n  %s [flags]\n\nExamples:\n%s\n\nFlags:\n", short, cmd.CommandPath(), example)
			}
			err := fn(cmd.Context(), args, c.stdout, out)
			switch {
			case err == nil, errors.Is(err, pflag.ErrHelp):
				return nil
			case errors.Is(err, errUsage):
				return &exitError{code: exitUsage}
			}
			var ee *exitError
			if errors.As(err, &ee) {
				return err
			}
			return &exitError{code: exitFailure, err: err}
		},
	}
}

// wantsHelp reports whether args ask for help (before any "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// errUsage reports bad flags or arguments (the command has printed why).
var errUsage = errors.New("usage")
