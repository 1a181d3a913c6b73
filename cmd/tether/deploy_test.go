package main

import (
	"bufio"
	"encoding/json"
	"go/build"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// The deployment recipes of deploy/ are checked here, without a container
// engine (none runs on the CI machines): their syntax, and that what they
// name exists — packages, build targets, commands, environment variables,
// services and files.

// deployDir is deploy/ from this package's directory.
const deployDir = "../../deploy"

// instruction is one instruction of a Containerfile.
type instruction struct {
	// op is the instruction, upper case (FROM, RUN, …).
	op string
	// args is the rest of the line, continuations joined.
	args string
}

// stage is a build stage: its FROM and the instructions after it.
type stage struct {
	name, base string
	body       []instruction
}

// parseContainerfile reads a Containerfile's stages.
func parseContainerfile(t *testing.T, path string) []stage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	known := map[string]bool{"FROM": true, "RUN": true, "COPY": true, "ADD": true, "ENV": true, "ARG": true,
		"WORKDIR": true, "USER": true, "EXPOSE": true, "ENTRYPOINT": true, "CMD": true, "HEALTHCHECK": true,
		"LABEL": true, "VOLUME": true, "STOPSIGNAL": true}
	var stages []stage
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	flush := func() {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return
		}
		op, args, _ := strings.Cut(line, " ")
		op = strings.ToUpper(op)
		if !known[op] {
			t.Fatalf("%s: unknown instruction %q", path, line)
		}
		in := instruction{op: op, args: strings.TrimSpace(args)}
		if op == "FROM" {
			f := strings.Fields(in.args)
			st := stage{base: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			} else if len(f) != 1 {
				t.Fatalf("%s: bad FROM %q", path, line)
			}
			stages = append(stages, st)
			return
		}
		if len(stages) == 0 {
			if op != "ARG" {
				t.Fatalf("%s: %s before the first FROM", path, op)
			}
			return
		}
		stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`) + " ")
			continue
		}
		cur.WriteString(line)
		flush()
	}
	flush()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return stages
}

// execForm decodes an instruction's exec form (a JSON array), failing the
// test if it is the shell form: the final images have no shell.
func execForm(t *testing.T, in instruction) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(in.args), &argv); err != nil || len(argv) == 0 {
		t.Fatalf("%s %s: not the exec form (a JSON array): %v", in.op, in.args, err)
	}
	return argv
}

// TestDeployContainerfile: the image builds the right packages as static
// binaries and runs them as a non-root user without a shell; its health
// check is a command of the binary.
func TestDeployContainerfile(t *testing.T) {
	stages := parseContainerfile(t, filepath.Join(deployDir, "Containerfile"))
	byName := map[string]stage{}
	for _, s := range stages {
		byName[s.name] = s
	}
	bld, ok := byName["build"]
	if !ok || len(stages) != 3 || stages[len(stages)-1].name != "tether" {
		t.Fatalf("stages %+v: want build, hello and tether (last: the default target)", stages)
	}
	// The build stage: CGO off, and each `go build -o OUT PKG` builds a main
	// package of this repository.
	outputs := map[string]bool{}
	cgoOff := false
	buildRe := regexp.MustCompile(`go build (?:-[a-z]+=(?:"[^"]*"|\S+) )*-o (\S+) (\./\S+)`)
	for _, in := range bld.body {
		if in.op == "ENV" && strings.Contains(in.args, "CGO_ENABLED=0") {
			cgoOff = true
		}
		if in.op != "RUN" {
			continue
		}
		for _, m := range buildRe.FindAllStringSubmatch(in.args, -1) {
			pkg, err := build.ImportDir(filepath.Join("../..", m[2]), 0)
			if err != nil || pkg.Name != "main" {
				t.Errorf("the image builds %s, not a main package of the repository: %v", m[2], err)
			}
			outputs[m[1]] = true
		}
	}
	if !cgoOff || !outputs["/out/tether"] || !outputs["/out/hello"] {
		t.Fatalf("build stage: CGO_ENABLED=0 %v, outputs %v", cgoOff, outputs)
	}
	for _, name := range []string{"hello", "tether"} {
		st := byName[name]
		var user string
		var entry []string
		for _, in := range st.body {
			switch in.op {
			case "RUN":
				t.Errorf("stage %s runs %q: the final images have no shell", name, in.args)
			case "USER":
				user = in.args
			case "COPY":
				f := strings.Fields(in.args)
				if len(f) != 3 || f[0] != "--from=build" || !outputs[f[1]] {
					t.Errorf("stage %s: COPY %s copies nothing the build stage made", name, in.args)
				}
			case "ENTRYPOINT":
				entry = execForm(t, in)
			case "CMD":
				execForm(t, in)
			}
		}
		if uid, _, _ := strings.Cut(user, ":"); user == "" || uid == "0" || uid == "root" {
			t.Errorf("stage %s runs as %q: want a non-root user", name, user)
		}
		if len(entry) == 0 {
			t.Errorf("stage %s has no ENTRYPOINT", name)
		}
	}
	// The server stage: its health check is `tether healthcheck` (exec
	// form), and its default command is `tether server`.
	var health, cmd []string
	for _, in := range byName["tether"].body {
		switch in.op {
		case "HEALTHCHECK":
			_, c, ok := strings.Cut(in.args, "CMD ")
			if !ok {
				t.Fatalf("HEALTHCHECK %s: no CMD", in.args)
			}
			health = execForm(t, instruction{op: "HEALTHCHECK CMD", args: c})
		case "CMD":
			cmd = execForm(t, in)
		}
	}
	if len(health) != 2 || health[0] != "/usr/local/bin/tether" || health[1] != "healthcheck" {
		t.Fatalf("HEALTHCHECK %v: want tether healthcheck", health)
	}
	if len(cmd) != 1 || cmd[0] != "server" {
		t.Fatalf("CMD %v: want server", cmd)
	}
	checkCommandLines(t, []commandLine{{[]string{"healthcheck", "--help"}, 0, "--addr"}})
}

// composeFile is what the tests read of a compose file.
type composeFile struct {
	Services map[string]struct {
		Image string `json:"image"`
		Build *struct {
			Context    string `json:"context"`
			Dockerfile string `json:"dockerfile"`
			Target     string `json:"target"`
		} `json:"build"`
		Command     []string          `json:"command"`
		Environment map[string]string `json:"environment"`
		Volumes     []string          `json:"volumes"`
		DependsOn   json.RawMessage   `json:"depends_on"`
		Healthcheck *struct {
			Test []string `json:"test"`
		} `json:"healthcheck"`
		Deploy *struct {
			Replicas int `json:"replicas"`
		} `json:"deploy"`
	} `json:"services"`
}

// knownEnv are the environment variables the deploy files may set: the
// server's flags' (envName), the healthcheck's, and the API clients'.
func knownEnv(t *testing.T) map[string]bool {
	t.Helper()
	known := map[string]bool{envAddress: true, envNamespace: true, envAPIKeyCLI: true}
	fs := serverFlagSet()
	fs.VisitAll(func(f *pflag.Flag) { known[envName(f.Name)] = true })
	return known
}

// checkServerEnv parses env as `tether server` would and fails the test if
// a variable is unknown or does not parse.
func checkServerEnv(t *testing.T, where string, env map[string]string) {
	t.Helper()
	known := knownEnv(t)
	for k := range env {
		if !known[k] {
			t.Errorf("%s sets %s, which no tether flag reads", where, k)
		}
	}
	err := parseEnvFlags(serverFlagSet(), nil, func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	})
	if err != nil {
		t.Errorf("%s: %v", where, err)
	}
}

// TestDeployCompose: the compose files run PostgreSQL, the server built from
// the Containerfile (N replicas in compose.replicas.yaml, behind nginx) and
// the hello worker, each pointing at a service that exists, with settings
// the server reads.
func TestDeployCompose(t *testing.T) {
	targets := map[string]bool{}
	for _, s := range parseContainerfile(t, filepath.Join(deployDir, "Containerfile")) {
		targets[s.name] = true
	}
	for _, file := range []string{"compose.yaml", "compose.replicas.yaml"} {
		raw, err := os.ReadFile(filepath.Join(deployDir, file))
		if err != nil {
			t.Fatal(err)
		}
		var c composeFile
		if err := yaml.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, name := range []string{"postgres", "tether", "hello"} {
			if _, ok := c.Services[name]; !ok {
				t.Fatalf("%s: no service %q", file, name)
			}
		}
		for name, s := range c.Services {
			if s.Build != nil {
				df := filepath.Join(deployDir, s.Build.Context, s.Build.Dockerfile)
				if _, err := os.Stat(df); err != nil || !targets[s.Build.Target] {
					t.Errorf("%s: service %s builds %s target %q: %v", file, name, df, s.Build.Target, err)
				}
			}
			for _, v := range s.Volumes {
				src, _, _ := strings.Cut(v, ":")
				if strings.HasPrefix(src, ".") {
					if _, err := os.Stat(filepath.Join(deployDir, src)); err != nil {
						t.Errorf("%s: service %s mounts %s: %v", file, name, src, err)
					}
				}
			}
		}
		tether := c.Services["tether"]
		if tether.Build.Target != "tether" || len(tether.Command) != 1 || tether.Command[0] != "server" {
			t.Errorf("%s: the tether service runs %v of target %q", file, tether.Command, tether.Build.Target)
		}
		if tether.Healthcheck == nil || strings.Join(tether.Healthcheck.Test, " ") != "CMD /usr/local/bin/tether healthcheck" {
			t.Errorf("%s: the tether service's health check is not `tether healthcheck`", file)
		}
		checkServerEnv(t, file+" tether", tether.Environment)
		u, err := url.Parse(tether.Environment[envDatabaseURL])
		if err != nil || u.Hostname() != "postgres" {
			t.Errorf("%s: %s=%q: not the postgres service", file, envDatabaseURL, tether.Environment[envDatabaseURL])
		}
		hello := c.Services["hello"]
		checkServerEnv(t, file+" hello", hello.Environment)
		u, err = url.Parse(hello.Environment[envAddress])
		if _, ok := c.Services[u.Hostname()]; err != nil || !ok {
			t.Errorf("%s: hello's %s=%q is no service", file, envAddress, hello.Environment[envAddress])
		}
		if file == "compose.replicas.yaml" {
			if tether.Deploy == nil || tether.Deploy.Replicas < 2 {
				t.Errorf("%s: the tether service is not replicated", file)
			}
			if u.Hostname() != "lb" {
				t.Errorf("%s: hello talks to %s, not the load balancer", file, u.Hostname())
			}
		}
	}
	conf, err := os.ReadFile(filepath.Join(deployDir, "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server tether:7070 resolve;", "proxy_pass http://tether;", "listen 8080;", "proxy_read_timeout 120s;"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
	if strings.Count(string(conf), "{") != strings.Count(string(conf), "}") {
		t.Error("nginx.conf: unbalanced braces")
	}
}

// TestDeploySystemd: the unit runs `tether server` hardened, from an
// environment file whose variables the server reads and parses; it waits
// for the drain on stop.
func TestDeploySystemd(t *testing.T) {
	f, err := os.Open(filepath.Join(deployDir, "tether.service"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("tether.service: bad line %q", line)
			}
			keys[section+"."+k] = append(keys[section+"."+k], v)
		}
	}
	want := map[string]string{
		"Service.ExecStart": "/usr/local/bin/tether server", "Service.EnvironmentFile": "/etc/tether/tether.env",
		"Service.DynamicUser": "yes", "Service.ProtectSystem": "strict", "Service.NoNewPrivileges": "yes",
		"Service.ProtectHome": "yes", "Service.PrivateTmp": "yes", "Service.CapabilityBoundingSet": "",
		"Install.WantedBy": "multi-user.target",
	}
	for k, v := range want {
		if got := keys[k]; len(got) != 1 || got[0] != v {
			t.Errorf("tether.service: %s=%v, want %q", k, got, v)
		}
	}
	stop, err := time.ParseDuration(keys["Service.TimeoutStopSec"][0])
	if o, _, perr := parseServe("tether server", nil, io.Discard, func(*pflag.FlagSet, *serveOptions) {}); err != nil || perr != nil || stop <= o.shutdown {
		t.Errorf("TimeoutStopSec %v (%v) must exceed the default --shutdown-timeout", stop, err)
	}

	raw, err := os.ReadFile(filepath.Join(deployDir, "tether.env"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		// Commented-out settings must be right too.
		line = strings.TrimPrefix(line, "#")
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.HasPrefix(k, "TETHER_") {
			continue
		}
		env[k] = v
	}
	if len(env) < 5 || env[envDatabaseURL] == "" {
		t.Fatalf("tether.env: %v", env)
	}
	checkServerEnv(t, "tether.env", env)
	if d, err := time.ParseDuration(env["TETHER_SHUTDOWN_TIMEOUT"]); err != nil || d >= stop {
		t.Errorf("tether.env: TETHER_SHUTDOWN_TIMEOUT %q must be under TimeoutStopSec %v", env["TETHER_SHUTDOWN_TIMEOUT"], stop)
	}
}
