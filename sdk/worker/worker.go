// Package worker runs workflows and activities for one task queue: it
// long-polls the server for workflow turns and activity attempts, runs them
// within concurrency limits, renews the locks of running activities,
// delivers their cancellation, and shuts down gracefully.
//
//	w := worker.New(c, "orders", worker.Options{})
//	w.RegisterWorkflow(ProcessOrder)
//	w.RegisterActivity(Charge)
//	err := w.Run(worker.InterruptCh()) // until SIGINT or SIGTERM (Temporal's form)
//	err = w.RunContext(ctx)            // until ctx is cancelled
//
// Start and Stop run the worker in the background, as Temporal's do.
package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/tetherhq/tether/sdk/internal/deployment"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nexus-rpc/sdk-go/nexus"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/interceptor"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/protocol"
	"github.com/tetherhq/tether/sdk/log"
	"github.com/tetherhq/tether/sdk/workflow"
)

// Options configure a Worker. Zero values select the defaults.
type Options struct {
	// Identity names the worker in the server's records (default
	// "host/pid").
	Identity string
	// BuildID identifies the worker's code version in the server's records,
	// and pins workflows to it (Temporal's worker versioning, simplified):
	// an execution takes the build id of the worker that runs its first
	// turn, and its later turns go only to workers of the same build id
	// (to any worker when that first worker had none). A worker without a
	// build id gets only executions without one. Activities are not
	// pinned.
	BuildID string
	// DeploymentOptions are Temporal's worker-deployment versioning
	// options, mapped onto BuildID: with UseVersioning, the worker's build
	// id is Version's ("<DeploymentName>.<BuildID>", or BuildID alone
	// without a deployment name), which wins over BuildID. Every workflow
	// behaves as VersioningBehaviorPinned (workflow.VersioningBehavior).
	// UseVersioning without Version.BuildID, a DefaultVersioningBehavior
	// without UseVersioning, or UseVersioning with EnableSessionWorker make
	// Start and Run fail, as Temporal refuses them.
	DeploymentOptions DeploymentOptions
	// OnFatalError is Temporal's callback for an error that stops the
	// worker. Tether's worker does not stop on the server's errors (it
	// retries them with backoff, and Start reports what keeps it from
	// starting), so it is accepted and never called.
	OnFatalError func(error)
	// MaxConcurrentWorkflowTurns bounds the workflow turns run at once
	// (default 100). A turn holds its slot while its acknowledgement is on
	// its way, which is most of its time: the more slots, the more turns
	// a poll or an activity result hands over at once, and the larger the
	// server's groups of acknowledgements (docs/benchmarks.md, "Worker
	// turn slots").
	MaxConcurrentWorkflowTurns int
	// MaxConcurrentActivities bounds the activity attempts run at once
	// (default 100). An abandoned activity no longer counts.
	MaxConcurrentActivities int
	// WorkflowPollers and ActivityPollers are the numbers of concurrent long
	// polls (default 2 each, at most the matching concurrency limit).
	WorkflowPollers int
	ActivityPollers int
	// WorkflowTasksPerPoll is how many turns one workflow poll may take at
	// once (default and at most 16; 1: one turn per poll, as servers
	// before max_tasks understand). A poll asks for as many as there are
	// free turn slots, up to this bound.
	WorkflowTasksPerPoll int
	// PollWait is the long-poll wait (default 30s).
	PollWait time.Duration
	// WorkflowLockDuration is the lock of a workflow turn (default: the
	// server's, 10s).
	WorkflowLockDuration time.Duration
	// ActivityLockDuration is the lock of an activity attempt (default 30s).
	// The worker renews it about every third of it while the activity runs.
	ActivityLockDuration time.Duration
	// LeaseDuration is the worker session's lease: the server declares the
	// worker lost (and reschedules its activities) when it does not hear
	// from it for that long (default 10s). Negative disables the session
	// heartbeat.
	LeaseDuration time.Duration
	// DisableEagerDispatch turns off eager dispatch. By default a worker
	// that runs both workflows and activities asks, when it acknowledges a
	// turn, for the attempts the turn schedules on its own queues to be
	// claimed for it in the same transaction (as many as it has free
	// activity slots), and, when it reports an activity's result, for the
	// workflow turn that result makes due (when it has a free turn slot):
	// both start without a poll.
	DisableEagerDispatch bool
	// DisableSpeculativeTurns turns off speculative turns. By default a
	// worker that reports an activity's result with eager dispatch, and
	// holds the workflow's state in its cache, runs the workflow's next
	// turn on the result at once and sends it with the result: the server
	// applies both in one transaction when nothing else reached the
	// workflow meanwhile, and the worker drops the turn otherwise (the
	// real turn runs instead). It saves the turn's ack: a request and a
	// commit per activity of a workflow run by one worker.
	DisableSpeculativeTurns bool
	// CancelGracePeriod is how long a cancelled activity may take to return
	// before it is abandoned and its attempt acknowledged (default 10s).
	CancelGracePeriod time.Duration
	// StopTimeout is how long Run waits, once its context is cancelled, for
	// running work to finish before abandoning it (default 30s).
	StopTimeout time.Duration
	// CacheSize is the number of workflow executions whose live state is
	// kept between turns (default 1000; negative disables the cache).
	CacheSize int
	// Logger defaults to the client's logger. A *slog.Logger is a
	// log.Logger, as is any adapter written for Temporal (package sdk/log).
	Logger log.Logger
	// MaxConcurrentActivityExecutionSize, MaxConcurrentWorkflowTaskExecutionSize,
	// MaxConcurrentActivityTaskPollers, MaxConcurrentWorkflowTaskPollers,
	// WorkerStopTimeout and DisableEagerActivities are Temporal's names of
	// MaxConcurrentActivities, MaxConcurrentWorkflowTurns, ActivityPollers,
	// WorkflowPollers, StopTimeout and DisableEagerDispatch, used when
	// Tether's is zero.
	MaxConcurrentActivityExecutionSize int
	// MaxConcurrentWorkflowTaskExecutionSize is MaxConcurrentWorkflowTurns.
	MaxConcurrentWorkflowTaskExecutionSize int
	// MaxConcurrentActivityTaskPollers is ActivityPollers.
	MaxConcurrentActivityTaskPollers int
	// MaxConcurrentWorkflowTaskPollers is WorkflowPollers.
	MaxConcurrentWorkflowTaskPollers int
	// WorkerStopTimeout is StopTimeout.
	WorkerStopTimeout time.Duration
	// DisableEagerActivities is DisableEagerDispatch.
	DisableEagerActivities bool
	// BackgroundActivityContext is the parent of every activity's context
	// (Temporal's): its values reach the activities; its cancellation does
	// not (the worker cancels activities itself). Default:
	// context.Background().
	BackgroundActivityContext context.Context
	// HostQueue gives the worker a host task queue of its own,
	// "<task queue>@<worker id>", which no other worker serves. The worker
	// polls it for activities before its shared queue. An activity learns
	// its name from activity.GetInfo(ctx).HostTaskQueue and a workflow pins
	// later activities to this worker by scheduling them there (see
	// docs/host-queues.md). The name is fixed for the life of the Worker,
	// even if its session is cleaned up and it continues under a new id.
	HostQueue bool
	// WorkflowPanicPolicy is what a panic in workflow code, or a
	// nondeterminism error, does (Temporal's worker.Options field).
	// BlockWorkflow (the default) fails the turn only: the server retries
	// it with a backoff, shows the error as the workflow's last_task_error,
	// and the workflow resumes from its history once a worker with fixed
	// code runs it. FailWorkflow fails the workflow instead (error type
	// "Panic" for a panic, "Nondeterminism" for a nondeterminism error).
	WorkflowPanicPolicy WorkflowPanicPolicy
	// EnableSessionWorker makes the worker a session worker (Temporal's
	// worker.Options field): it answers workflow.CreateSession and runs
	// the activities of its sessions on its host task queue (it implies
	// HostQueue). See docs/sdk.md, "Sessions".
	EnableSessionWorker bool
	// MaxConcurrentSessionExecutionSize bounds the sessions the worker
	// holds at once (default 1000); a CreateSession beyond it goes to
	// another session worker, or waits until its CreationTimeout.
	MaxConcurrentSessionExecutionSize int
	// Interceptors wrap the workflows and activities the worker runs
	// (Temporal's worker.Options field; package interceptor). They come
	// after the client's interceptors that are also WorkerInterceptors;
	// the first of the slice is called first.
	Interceptors []interceptor.WorkerInterceptor
	// ContextPropagators carry values of contexts through the headers of
	// workflow calls (workflow.ContextPropagator), after the client's
	// (client.Options.ContextPropagators).
	ContextPropagators []workflow.ContextPropagator
	// EnableLoggingInReplay keeps the workflow loggers (workflow.GetLogger)
	// writing while the worker replays a history (Temporal's field; by
	// default a replay is silent, so that each line is written once).
	EnableLoggingInReplay bool
}

// WorkflowPanicPolicy is the value of Options.WorkflowPanicPolicy
// (Temporal's worker.WorkflowPanicPolicy).
type WorkflowPanicPolicy int

const (
	// BlockWorkflow fails the turn of a workflow whose code panicked or
	// disagrees with its history; the turn is retried with a backoff
	// until a worker with fixed code completes it. The default.
	BlockWorkflow WorkflowPanicPolicy = iota
	// FailWorkflow fails the workflow whose code panicked (with a
	// *workflow.PanicError) or disagrees with its history (with the
	// *workflow.NondeterminismError).
	FailWorkflow
)

func (o Options) withDefaults(c *client.TetherClient) Options {
	if o.Identity == "" && c != nil {
		o.Identity = c.Identity()
	}
	if o.Identity == "" {
		host, _ := os.Hostname()
		o.Identity = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	if o.MaxConcurrentWorkflowTurns <= 0 {
		o.MaxConcurrentWorkflowTurns = o.MaxConcurrentWorkflowTaskExecutionSize
	}
	if o.MaxConcurrentActivities <= 0 {
		o.MaxConcurrentActivities = o.MaxConcurrentActivityExecutionSize
	}
	if o.WorkflowPollers <= 0 {
		o.WorkflowPollers = o.MaxConcurrentWorkflowTaskPollers
	}
	if o.ActivityPollers <= 0 {
		o.ActivityPollers = o.MaxConcurrentActivityTaskPollers
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = o.WorkerStopTimeout
	}
	o.DisableEagerDispatch = o.DisableEagerDispatch || o.DisableEagerActivities
	if o.BackgroundActivityContext == nil {
		o.BackgroundActivityContext = context.Background()
	}
	if c != nil {
		// The client's interceptors that are also worker interceptors
		// come first, then the worker's own (Temporal's order); the same
		// for the propagators.
		var fromClient []interceptor.WorkerInterceptor
		for _, ci := range c.Interceptors() {
			if wi, ok := ci.(interceptor.WorkerInterceptor); ok {
				fromClient = append(fromClient, wi)
			}
		}
		o.Interceptors = slices.Concat(fromClient, o.Interceptors)
		o.ContextPropagators = slices.Concat(c.ContextPropagators(), o.ContextPropagators)
	}
	if o.MaxConcurrentWorkflowTurns <= 0 {
		o.MaxConcurrentWorkflowTurns = 100
	}
	if o.MaxConcurrentActivities <= 0 {
		o.MaxConcurrentActivities = 100
	}
	if o.WorkflowPollers <= 0 {
		o.WorkflowPollers = 2
	}
	o.WorkflowPollers = min(o.WorkflowPollers, o.MaxConcurrentWorkflowTurns)
	if o.WorkflowTasksPerPoll <= 0 {
		o.WorkflowTasksPerPoll = maxWorkflowTasksPerPoll
	}
	o.WorkflowTasksPerPoll = min(o.WorkflowTasksPerPoll, maxWorkflowTasksPerPoll, o.MaxConcurrentWorkflowTurns)
	if o.ActivityPollers <= 0 {
		o.ActivityPollers = 2
	}
	o.ActivityPollers = min(o.ActivityPollers, o.MaxConcurrentActivities)
	if o.PollWait <= 0 {
		o.PollWait = 30 * time.Second
	}
	if o.ActivityLockDuration <= 0 {
		o.ActivityLockDuration = 30 * time.Second
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = 10 * time.Second
	}
	if o.CancelGracePeriod <= 0 {
		o.CancelGracePeriod = 10 * time.Second
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 30 * time.Second
	}
	if o.CacheSize == 0 {
		o.CacheSize = 1000
	}
	if o.Logger == nil && c != nil {
		o.Logger = c.Logger()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// DeploymentOptions are Temporal's worker.DeploymentOptions (see
// Options.DeploymentOptions).
type DeploymentOptions struct {
	// UseVersioning opts the worker into versioning by Version.
	UseVersioning bool
	// Version is the worker's deployment version.
	Version WorkerDeploymentVersion
	// DefaultVersioningBehavior is the behaviour of the workflows
	// registered without one (accepted; Tether pins every execution).
	DefaultVersioningBehavior workflow.VersioningBehavior
}

// WorkerDeploymentVersion is Temporal's worker.WorkerDeploymentVersion: a
// deployment's name and a build of it (DeploymentName, BuildID); its
// String() is Tether's build id, "<DeploymentName>.<BuildID>" (BuildID
// alone without a deployment name). client.WorkerDeploymentVersion is the
// same type.
//
// Fields (the type is defined in an internal package):
//
//   - DeploymentName string: DeploymentName names the deployment.
//   - BuildID string: BuildID names the build.
type WorkerDeploymentVersion = deployment.WorkerDeploymentVersion

// deploymentBuildID checks d and returns the build id it gives the worker
// ("" when it gives none).
func deploymentBuildID(d DeploymentOptions, sessions bool) (string, error) {
	switch {
	case !d.UseVersioning && d.DefaultVersioningBehavior != workflow.VersioningBehaviorUnspecified:
		return "", errors.New("DeploymentOptions.DefaultVersioningBehavior needs UseVersioning")
	case !d.UseVersioning:
		return "", nil
	case d.Version.BuildID == "":
		return "", errors.New("DeploymentOptions.UseVersioning needs Version.BuildID")
	case sessions:
		return "", errors.New("DeploymentOptions.UseVersioning cannot be combined with EnableSessionWorker")
	}
	return d.Version.String(), nil
}

// maxQueueName is the longest task queue name the server accepts.
const maxQueueName = 200

// WorkflowRegistry registers workflows: Temporal's worker.WorkflowRegistry,
// with its signatures. The methods return nothing and panic on an invalid
// registration (a function of another shape, an anonymous function without
// a name, a name registered twice), naming the method and the function, as
// Temporal's do.
type WorkflowRegistry interface {
	// RegisterWorkflow registers a workflow function under its Go name.
	RegisterWorkflow(w any)
	// RegisterWorkflowWithOptions registers a workflow function with
	// Temporal's workflow.RegisterOptions.
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
	// RegisterDynamicWorkflow registers the function that runs every
	// workflow type without a registration of its own.
	RegisterDynamicWorkflow(w any, options workflow.DynamicRegisterOptions)
}

// ActivityRegistry registers activities: Temporal's
// worker.ActivityRegistry, with its signatures (they panic on an invalid
// registration, as WorkflowRegistry's do).
type ActivityRegistry interface {
	// RegisterActivity registers an activity function, or each exported
	// method of a struct pointer.
	RegisterActivity(a any)
	// RegisterActivityWithOptions registers an activity with Temporal's
	// activity.RegisterOptions.
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
	// RegisterDynamicActivity registers the function that runs every
	// activity type without a registration of its own.
	RegisterDynamicActivity(a any, options activity.DynamicRegisterOptions)
}

// Adder is Tether's error-returning registration: each Register method of
// Registry has an Add method that does the same and returns the error
// instead of panicking. AddWorkflow and AddActivity also take
// RegisterOptions (WithName).
type Adder interface {
	// AddWorkflow is RegisterWorkflow returning the error; opts may name
	// the workflow (WithName).
	AddWorkflow(fn any, opts ...RegisterOption) error
	// AddWorkflowWithOptions is RegisterWorkflowWithOptions returning the
	// error.
	AddWorkflowWithOptions(fn any, opts workflow.RegisterOptions) error
	// AddDynamicWorkflow is RegisterDynamicWorkflow returning the error.
	AddDynamicWorkflow(fn any, opts workflow.DynamicRegisterOptions) error
	// AddActivity is RegisterActivity returning the error; opts may name
	// the activity (WithName; for a struct, the prefix of its methods'
	// names).
	AddActivity(fn any, opts ...RegisterOption) error
	// AddActivityWithOptions is RegisterActivityWithOptions returning the
	// error.
	AddActivityWithOptions(fn any, opts activity.RegisterOptions) error
	// AddDynamicActivity is RegisterDynamicActivity returning the error.
	AddDynamicActivity(fn any, opts activity.DynamicRegisterOptions) error
}

// Registry registers workflows and activities (Temporal's worker.Registry).
type Registry interface {
	WorkflowRegistry
	ActivityRegistry
	NexusServiceRegistry
}

// Worker is a worker of one task queue (Temporal's worker.Worker, which
// New returns): register workflows and activities, then Start (and Stop)
// or Run. Its implementation is *TetherWorker.
type Worker interface {
	Registry
	Adder
	// Start starts the worker in the background; it returns once the
	// worker has registered with the server (or failed to).
	Start() error
	// Run runs the worker until interruptCh delivers (InterruptCh() for
	// SIGINT and SIGTERM), then stops it.
	Run(interruptCh <-chan any) error
	// Stop stops a worker started with Start, waiting for its running
	// work up to Options.WorkerStopTimeout.
	Stop()
	// RunContext runs the worker until ctx ends (Tether's).
	RunContext(ctx context.Context) error
	// ID returns the worker's id, as the server knows it (Tether's).
	ID() string
	// TaskQueue returns the queue the worker serves (Tether's).
	TaskQueue() string
	// HostTaskQueue returns the worker's host task queue, "" without one
	// (Tether's).
	HostTaskQueue() string
	// Stats returns the worker's counters (Tether's).
	Stats() Stats
}

var _ Worker = (*TetherWorker)(nil)

// TetherWorker serves one task queue: the Worker that New returns. Register
// workflows and activities, then Run.
type TetherWorker struct {
	// noQueries: the worker does not poll queries (the worker of a
	// queue's standalone activities, standaloneSibling).
	noQueries bool
	c         *client.TetherClient
	p         *protocol.Conn // the worker protocol over c's HTTP core
	queue     string
	opts      Options
	log       *slog.Logger
	// baseLog is Options.Logger as a *slog.Logger (the workflows' logger).
	baseLog *slog.Logger
	reg     *registry
	cache   *cache
	id      atomic.Pointer[string]
	secret  string // the session secret (session.go), set once in New
	hostQ   string // the host task queue ("" without Options.HostQueue), set once in New
	mu      sync.Mutex
	active  bool

	// hardStop is closed when the stop timeout has run out.
	hardStop chan struct{}
	// downState tells what the heartbeat failures since the last success
	// said (downNone, downOnly, downOther; session.go).
	downState atomic.Int32
	// lossDeferred: the lease ran out locally while the server was down,
	// and cancelling the running activities waits for what the server
	// answers (sessionLost).
	lossDeferred atomic.Bool
	// work counts running turns and attempts.
	work sync.WaitGroup
	// running are the attempts being run, by lock token.
	running sync.Map // string → *attempt
	// metrics emits the worker's metrics (nil: the client has no
	// MetricsHandler).
	metrics *workerMetrics
	// reportValues holds, by attempt, where the context its activity
	// function runs with is written (wf.WithCallSink): its reports carry
	// its values (ack).
	reportValues sync.Map // *api.ActivityTask → *wf.CallSink
	stats        stats
	// newErr is why New could not make a working worker (reported by
	// Start and Run).
	newErr error
	// bg is the run of Start (nil when not started with Start).
	bg *background
	// eagerSlots are the activity slots while the worker runs activities
	// and takes eager attempts (nil otherwise); eagerTurns the turn slots
	// while it takes eager workflow tasks.
	eagerSlots atomic.Pointer[chan struct{}]
	eagerTurns atomic.Pointer[chan struct{}]

	// sessions is the worker's side of workflow sessions (nil without
	// Options.EnableSessionWorker; sessionworker.go).
	sessions *sessionHost
	// nexusServices are the Nexus services of RegisterNexusService
	// (nexus.go), guarded by mu.
	nexusServices []*nexus.Service
	// nexus are the local activities of its workflows' Nexus calls.
	nexus nexusCalls
}

// New returns a worker for taskQueue on c (Temporal's worker.New). c is a
// client of this package's client: Dial's, NewLazyClient's, or a
// *client.TetherClient; another implementation of client.Client makes
// Start and Run fail.
func New(c client.Client, taskQueue string, opts Options) Worker {
	return NewTetherWorker(c, taskQueue, opts)
}

// NewTetherWorker is New returning the implementation (for the few callers
// that need its type).
func NewTetherWorker(c client.Client, taskQueue string, opts Options) *TetherWorker {
	tc, _ := c.(*client.TetherClient)
	buildID, deployErr := deploymentBuildID(opts.DeploymentOptions, opts.EnableSessionWorker)
	if buildID != "" {
		opts.BuildID = buildID
	}
	opts = opts.withDefaults(tc)
	w := &TetherWorker{c: tc, queue: taskQueue, opts: opts, reg: newRegistry(), secret: newSessionSecret()}
	if deployErr != nil {
		w.newErr = fmt.Errorf("worker: %w", deployErr)
	}
	if tc == nil {
		w.newErr = fmt.Errorf("worker: New needs a client of package client (Dial, NewLazyClient), got %T", c)
	} else {
		w.p = protocol.Of(tc)
		w.metrics = newWorkerMetrics(w.p.Metrics(), taskQueue)
	}
	id := newWorkerID(opts.Identity)
	w.id.Store(&id)
	if opts.HostQueue || opts.EnableSessionWorker {
		w.hostQ = taskQueue + "@" + id
	}
	if opts.EnableSessionWorker {
		if err := w.enableSessions(); err != nil && w.newErr == nil {
			w.newErr = fmt.Errorf("worker: sessions: %w", err)
		}
	}
	if calls, err := w.newNexusCalls(); err != nil && w.newErr == nil {
		w.newErr = fmt.Errorf("worker: nexus: %w", err)
	} else {
		w.nexus = calls
	}
	w.baseLog = log.ToSlog(opts.Logger)
	w.log = w.baseLog.With("task_queue", taskQueue)
	w.cache = newCache(opts.CacheSize)
	return w
}

// ID returns the worker's id, as the server knows it.
func (w *TetherWorker) ID() string { return *w.id.Load() }

// TaskQueue returns the queue the worker serves.
func (w *TetherWorker) TaskQueue() string { return w.queue }

// HostTaskQueue returns the worker's host task queue ("<task queue>@<worker
// id>"), or "" when Options.HostQueue is off.
func (w *TetherWorker) HostTaskQueue() string { return w.hostQ }

// newWorkerID returns identity (reduced to [A-Za-z0-9._-]) and a random
// suffix.
func newWorkerID(identity string) string {
	var b strings.Builder
	for _, r := range identity {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
		if b.Len() >= 64 {
			break
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	prefix := strings.Trim(b.String(), "-")
	if prefix == "" {
		prefix = "worker"
	}
	return prefix + "-" + hex.EncodeToString(rnd[:])
}

// RegisterOption modifies a registration.
type RegisterOption func(*registration)

type registration struct {
	name string
	// replace: a registration of a taken name replaces the earlier one
	// (Temporal's DisableAlreadyRegisteredCheck).
	replace bool
}

// WithName registers the function under name instead of its Go name.
func WithName(name string) RegisterOption {
	return func(r *registration) { r.name = name }
}

// AddWorkflow registers a workflow function (see package workflow for
// the accepted signatures) under its Go name without package, or the name
// given WithName. It returns an error for an invalid signature, an anonymous
// function without a name, or a duplicate name.
func (w *TetherWorker) AddWorkflow(fn any, opts ...RegisterOption) error {
	return w.reg.registerWorkflow(fn, opts)
}

// RegisterWorkflow is Temporal's: AddWorkflow, panicking on an invalid
// registration.
func (w *TetherWorker) RegisterWorkflow(fn any) {
	mustRegister("RegisterWorkflow", fn, w.AddWorkflow(fn))
}

// AddActivity registers an activity function (see package activity for
// the accepted signatures) under its Go name without package and receiver,
// or the name given WithName. Method values (acts.Download) are fine.
//
// Like Temporal's, it also takes a struct or a pointer to one: each of its
// exported methods that has an activity's signature is registered under the
// method's name (prefixed with the WithName name, when given); an exported
// method of another shape is an error.
func (w *TetherWorker) AddActivity(fn any, opts ...RegisterOption) error {
	var r registration
	for _, o := range opts {
		o(&r)
	}
	return w.registerActivity(fn, r, false)
}

// RegisterActivity is Temporal's: AddActivity, panicking on an invalid
// registration.
func (w *TetherWorker) RegisterActivity(fn any) {
	mustRegister("RegisterActivity", fn, w.AddActivity(fn))
}

// AddActivityWithOptions is AddActivity with Temporal's options:
// Name names a function (or prefixes a struct's method names);
// SkipInvalidStructFunctions skips a struct's exported methods that are not
// activities instead of failing; DisableAlreadyRegisteredCheck lets a
// registration replace an earlier one of the same name instead of failing.
func (w *TetherWorker) AddActivityWithOptions(fn any, opts activity.RegisterOptions) error {
	return w.registerActivity(fn, registration{name: opts.Name, replace: opts.DisableAlreadyRegisteredCheck},
		opts.SkipInvalidStructFunctions)
}

// RegisterActivityWithOptions is Temporal's: AddActivityWithOptions,
// panicking on an invalid registration.
func (w *TetherWorker) RegisterActivityWithOptions(fn any, opts activity.RegisterOptions) {
	mustRegister("RegisterActivityWithOptions", fn, w.AddActivityWithOptions(fn, opts))
}

// AddWorkflowWithOptions is AddWorkflow with Temporal's options:
// Name is the workflow type (default: the function's Go name);
// DisableAlreadyRegisteredCheck lets it replace an earlier workflow of the
// same name instead of failing.
func (w *TetherWorker) AddWorkflowWithOptions(fn any, opts workflow.RegisterOptions) error {
	return w.reg.registerWorkflow(fn, workflowOptions(opts))
}

// RegisterWorkflowWithOptions is Temporal's: AddWorkflowWithOptions,
// panicking on an invalid registration.
func (w *TetherWorker) RegisterWorkflowWithOptions(fn any, opts workflow.RegisterOptions) {
	mustRegister("RegisterWorkflowWithOptions", fn, w.AddWorkflowWithOptions(fn, opts))
}

// RegistrationError is the value a Register method panics with: the
// method, the function (its Go name, or its type when it has none) and why
// it was refused. errors.As finds it in a recovered value; Unwrap gives
// the error the Add method returns.
type RegistrationError struct {
	// Method is the method that refused the registration
	// ("RegisterWorkflow", …).
	Method string
	// Func names the function or value that was given.
	Func string
	// Err is why it was refused.
	Err error
}

// Error names the method, the function and the reason.
func (e *RegistrationError) Error() string {
	return fmt.Sprintf("worker: %s(%s): %v", e.Method, e.Func, e.Err)
}

// Unwrap returns the reason.
func (e *RegistrationError) Unwrap() error { return e.Err }

// mustRegister panics with a *RegistrationError when err is not nil.
func mustRegister(method string, fn any, err error) {
	if err == nil {
		return
	}
	panic(&RegistrationError{Method: method, Func: describeFunc(fn), Err: err})
}

// describeFunc names fn: a function's Go name, otherwise its type.
func describeFunc(fn any) string {
	v := reflect.ValueOf(fn)
	if !v.IsValid() {
		return "nil"
	}
	if v.Kind() == reflect.Func && !v.IsNil() {
		if f := runtime.FuncForPC(v.Pointer()); f != nil {
			return f.Name()
		}
	}
	return v.Type().String()
}

// workflowOptions are opts as RegisterOptions.
func workflowOptions(opts workflow.RegisterOptions) []RegisterOption {
	return []RegisterOption{func(r *registration) {
		r.name, r.replace = opts.Name, opts.DisableAlreadyRegisteredCheck
	}}
}

func (w *TetherWorker) registerActivity(fn any, reg registration, skipInvalid bool) error {
	name := reg.name
	v := reflect.ValueOf(fn)
	// The type, not the value: a nil *T registers T's methods, as in Temporal
	// (var a *Activities; w.AddActivity(a)).
	isStruct := v.IsValid() && (v.Kind() == reflect.Struct || (v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct))
	if !isStruct {
		return w.reg.addActivity(fn, name, reg.replace)
	}
	// Every method is checked before any is registered: a refused struct
	// registers nothing.
	t := v.Type()
	var defs []*activityDef
	for i := range t.NumMethod() {
		m := t.Method(i)
		if !m.IsExported() {
			continue
		}
		sig, err := fnsig.InspectActivity(v.Method(i).Interface(), reflect.TypeFor[context.Context]())
		if err != nil {
			if skipInvalid {
				continue
			}
			return fmt.Errorf("worker: register activities of %s: method %s: %w", t, m.Name, err)
		}
		defs = append(defs, &activityDef{name: name + m.Name, sig: sig})
	}
	if len(defs) == 0 {
		return fmt.Errorf("worker: register activities of %s: no exported method is an activity", t)
	}
	return w.reg.addActivities(defs, reg.replace)
}

// RunContext serves the task queue until ctx is cancelled, then shuts
// down: it stops polling, lets the running turns and activities finish
// within the stop timeout, then cancels the activities still running and
// gives their attempts back to the server (abandon), so that another worker
// takes them at once. It returns nil after a shutdown, or an error when it
// cannot start.
func (w *TetherWorker) RunContext(ctx context.Context) error {
	if err := w.begin(); err != nil {
		return err
	}
	w.serve(ctx)
	return nil
}

// begin checks that the worker can start and marks it active.
func (w *TetherWorker) begin() error {
	if w.newErr != nil {
		return w.newErr
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.active {
		return errors.New("worker: already running")
	}
	if len(w.hostQ) > maxQueueName {
		return fmt.Errorf("worker: host task queue %q is longer than %d characters: shorten the task queue or the identity", w.hostQ, maxQueueName)
	}
	w.active = true
	w.hardStop = make(chan struct{})
	return nil
}

// background is a run started by Start.
type background struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// Start starts the worker in the background (Temporal's Worker.Start): it
// returns an error when the worker cannot start (already running, …), and nil once it polls. Stop stops it.
func (w *TetherWorker) Start() error {
	if err := w.begin(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	bg := &background{cancel: cancel, done: make(chan struct{})}
	w.mu.Lock()
	w.bg = bg
	w.mu.Unlock()
	go func() {
		defer close(bg.done)
		w.serve(ctx)
	}()
	return nil
}

// Stop stops a worker that Start started and returns once it has shut
// down, as RunContext does when its context ends. It does nothing for a
// worker that is not running from Start.
func (w *TetherWorker) Stop() {
	w.mu.Lock()
	bg := w.bg
	w.bg = nil
	w.mu.Unlock()
	if bg == nil {
		return
	}
	bg.cancel()
	<-bg.done
}

// Run starts the worker and serves until interruptCh delivers a value or
// is closed, then stops it (Temporal's Worker.Run; pass InterruptCh() to
// stop on SIGINT or SIGTERM). It returns Start's error, or nil after the
// shutdown.
func (w *TetherWorker) Run(interruptCh <-chan any) error {
	if err := w.Start(); err != nil {
		return err
	}
	<-interruptCh
	w.Stop()
	return nil
}

// InterruptCh returns a channel that receives a value on SIGINT or SIGTERM
// (Temporal's worker.InterruptCh), for Run.
func InterruptCh() <-chan any {
	ch := make(chan any, 1)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		signal.Stop(sigs)
		ch <- sig
	}()
	return ch
}

// serve runs the worker (begun by begin) until ctx is cancelled.
func (w *TetherWorker) serve(ctx context.Context) {
	hasWF, hasAct := w.reg.counts()
	if !hasWF && !hasAct {
		// Started before its registrations (as samples-go's helloworld test
		// does, Run in a goroutine): like Temporal's worker, it polls both
		// kinds of tasks and serves what is registered when a task comes.
		hasWF, hasAct = true, true
	}
	ctx = w.withSecret(ctx)
	defer func() {
		w.mu.Lock()
		w.active = false
		w.mu.Unlock()
	}()

	w.log.Info("worker starting", "worker_id", w.ID(), "workflows", hasWF, "activities", hasAct)
	w.metrics.started()
	var pollers sync.WaitGroup
	// A worker that runs activities also runs the workflows of its queue's
	// standalone activities (client.ExecuteActivity), on their own queue.
	if sib := w.standaloneSibling(hasAct); sib != nil {
		if err := sib.begin(); err != nil {
			w.log.Warn("standalone activities: not served", "error", err)
		} else {
			pollers.Go(func() { sib.serve(ctx) })
		}
	}
	if hasWF {
		turns := make(chan struct{}, w.opts.MaxConcurrentWorkflowTurns)
		for range w.opts.WorkflowPollers {
			pollers.Go(func() { w.pollWorkflows(ctx, turns) })
		}
		queries := make(chan struct{}, w.opts.MaxConcurrentWorkflowTurns)
		if !w.noQueries {
			pollers.Go(func() { w.pollQueries(ctx, queries) })
		}
		if hasAct && !w.opts.DisableEagerDispatch {
			w.eagerTurns.Store(&turns)
		}
	}
	if hasAct {
		slots := make(chan struct{}, w.opts.MaxConcurrentActivities)
		for range w.opts.ActivityPollers {
			pollers.Go(func() { w.pollActivities(ctx, slots) })
		}
		if hasWF && !w.opts.DisableEagerDispatch {
			w.eagerSlots.Store(&slots)
		}
	}
	sessionCtx, stopSession := context.WithCancel(context.WithoutCancel(ctx))
	var session sync.WaitGroup
	if w.opts.LeaseDuration > 0 {
		session.Go(func() { w.runSession(sessionCtx) })
	}

	<-ctx.Done()
	w.sessions.stopAll()
	w.eagerSlots.Store(nil)
	w.eagerTurns.Store(nil)
	w.log.Info("worker stopping", "worker_id", w.ID())
	pollers.Wait()
	done := make(chan struct{})
	go func() { w.work.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(w.opts.StopTimeout):
		w.log.Warn("stop timeout: abandoning running work", "worker_id", w.ID())
		close(w.hardStop)
		<-done
	}
	stopSession()
	session.Wait()
	w.cache.closeAll()
	w.log.Info("worker stopped", "worker_id", w.ID())
}

// stats counts what the worker did (for tests and logs).
type stats struct {
	turns         atomic.Int64
	cacheHits     atomic.Int64
	activities    atomic.Int64
	abandoned     atomic.Int64
	failedTurns   atomic.Int64
	activityFails atomic.Int64
	skipped       atomic.Int64
	historyReads  atomic.Int64
	historyPages  atomic.Int64
	eager         atomic.Int64
	eagerTurns    atomic.Int64
	batchedTurns  atomic.Int64
	// speculative, droppedSpeculative: speculative turns applied with
	// their results, and not applied.
	speculative        atomic.Int64
	droppedSpeculative atomic.Int64
}

// Stats is a snapshot of a worker's counters.
type Stats struct {
	// Turns is the number of workflow turns completed.
	Turns int64
	// CacheHits counts turns that continued a cached state without replay.
	CacheHits int64
	// FailedTurns counts turns given back with an error (nondeterminism…).
	FailedTurns int64
	// Activities counts activity attempts run to completion or failure.
	Activities int64
	// ActivityFailures counts attempts reported as failed.
	ActivityFailures int64
	// Abandoned counts activities left running after their grace period
	// or the stop timeout.
	Abandoned int64
	// SkippedCanceled counts attempts fetched with their cancellation
	// already requested, acknowledged without running.
	SkippedCanceled int64
	// HistoryReads counts turns for which the server expected this worker
	// to hold the workflow's state but it did not (evicted): the worker
	// read the whole history instead.
	HistoryReads int64
	// HistoryPageReads counts turns whose answer carried only the first
	// page of a long history: the worker read the rest before replaying.
	HistoryPageReads int64
	// EagerActivities counts attempts handed to this worker in the answer
	// of its own turn's ack (eager dispatch) rather than by a poll.
	EagerActivities int64
	// EagerWorkflowTasks counts turns handed to this worker in the answer
	// of an activity result it reported (eager dispatch) rather than by a
	// poll.
	EagerWorkflowTasks int64
	// BatchedWorkflowTasks counts turns that came in the more_tasks of a
	// poll's answer (a poll that took several turns at once) rather than as
	// the answer itself.
	BatchedWorkflowTasks int64
	// SpeculativeTurns counts turns this worker ran on an activity's
	// result it reported and sent with it, applied by the server with the
	// result (see Options.DisableSpeculativeTurns); they count in Turns
	// too.
	SpeculativeTurns int64
	// DroppedSpeculativeTurns counts speculative turns the server did not
	// apply (something else reached the workflow meanwhile): the real turn
	// ran instead.
	DroppedSpeculativeTurns int64
}

// Stats returns the worker's counters.
func (w *TetherWorker) Stats() Stats {
	return Stats{
		Turns:              w.stats.turns.Load(),
		CacheHits:          w.stats.cacheHits.Load(),
		FailedTurns:        w.stats.failedTurns.Load(),
		Activities:         w.stats.activities.Load(),
		ActivityFailures:   w.stats.activityFails.Load(),
		Abandoned:          w.stats.abandoned.Load(),
		SkippedCanceled:    w.stats.skipped.Load(),
		HistoryReads:       w.stats.historyReads.Load(),
		HistoryPageReads:   w.stats.historyPages.Load(),
		EagerActivities:    w.stats.eager.Load(),
		EagerWorkflowTasks: w.stats.eagerTurns.Load(),

		BatchedWorkflowTasks:    w.stats.batchedTurns.Load(),
		SpeculativeTurns:        w.stats.speculative.Load(),
		DroppedSpeculativeTurns: w.stats.droppedSpeculative.Load(),
	}
}

// maxWorkflowTasksPerPoll is the server's bound on a poll's max_tasks.
const maxWorkflowTasksPerPoll = 16
