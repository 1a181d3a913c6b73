package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// envPrefix starts the environment variable of every flag of the server
// commands (`tether server`, `tether dev`, `tether migrate`): --max-conns
// is $TETHER_MAX_CONNS.
const envPrefix = "TETHER_"

// envName is the environment variable of the flag name: TETHER_ and the
// name in upper snake case ("database-url" → "TETHER_DATABASE_URL").
func envName(flag string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// newFlagSet is the flag set of a server command (GNU style, --flag): its
// help prints the flags alone, under the header the command wrapper
// (serverCommands) writes; parse errors are returned, not printed.
func newFlagSet(name string, out io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprint(fs.Output(), fs.FlagUsages()) }
	return fs
}

// parseFlags parses args with fs. -h and --help print the flags and
// return pflag.ErrHelp; a bad flag or a stray argument is a usage error
// naming it.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usageErrorf("%w", err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return nil
}

// parseEnvFlags parses args with fs, every flag of which is also an
// environment variable (envName): a flag given on the command line wins,
// else its variable when set and not empty (lookup, os.LookupEnv), else
// the flag's default. Each flag's help names its variable. A variable that
// does not parse is a usage error naming the variable.
func parseEnvFlags(fs *pflag.FlagSet, args []string, lookup func(string) (string, bool)) error {
	fs.VisitAll(func(f *pflag.Flag) {
		f.Usage += " ($" + envName(f.Name) + ")"
	})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			return
		}
		name := envName(f.Name)
		v, ok := lookup(name)
		if !ok || v == "" {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("$%s=%q: %w", name, v, err))
		}
	})
	if len(errs) > 0 {
		return usageErrorf("bad environment variable: %w", errors.Join(errs...))
	}
	return nil
}
