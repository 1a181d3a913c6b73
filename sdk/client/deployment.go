package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/deployment"
)

// WorkerDeploymentVersion is Temporal's client.WorkerDeploymentVersion,
// the same type as worker.WorkerDeploymentVersion: a deployment's name
// and a build of it (DeploymentName, BuildID), whose String() is the
// workers' build id "<DeploymentName>.<BuildID>".
//
// Fields (the type is defined in an internal package):
//
//   - DeploymentName string: DeploymentName names the deployment.
//   - BuildID string: BuildID names the build.
type WorkerDeploymentVersion = deployment.WorkerDeploymentVersion

// WorkerDeploymentVersionDrainageStatus is Temporal's drainage status of
// a version (Tether does not track it: always Unspecified).
type WorkerDeploymentVersionDrainageStatus int

// Values of WorkerDeploymentVersionDrainageStatus.
const (
	// WorkerDeploymentVersionDrainageStatusUnspecified: not tracked.
	WorkerDeploymentVersionDrainageStatusUnspecified WorkerDeploymentVersionDrainageStatus = iota
	// WorkerDeploymentVersionDrainageStatusDraining: still has pinned work.
	WorkerDeploymentVersionDrainageStatusDraining
	// WorkerDeploymentVersionDrainageStatusDrained: has no pinned work.
	WorkerDeploymentVersionDrainageStatusDrained
)

// ErrVersionNotCurrent is the error of SetCurrentVersion and
// SetRampingVersion when Tether cannot make the routing true: workers of
// other versions of the deployment still take new executions.
var ErrVersionNotCurrent = errors.New("worker deployment: other versions' workers still take new executions")

// WorkerDeploymentDescribeOptions are the options of
// WorkerDeploymentHandle.Describe (none).
type WorkerDeploymentDescribeOptions struct{}

// WorkerDeploymentVersionSummary is one version of a deployment.
type WorkerDeploymentVersionSummary struct {
	// Version is the version.
	Version WorkerDeploymentVersion
	// CreateTime is when its first live worker session started.
	CreateTime time.Time
	// DrainageStatus is not tracked (Unspecified).
	DrainageStatus WorkerDeploymentVersionDrainageStatus
}

// WorkerDeploymentRoutingConfig says which version takes new executions.
type WorkerDeploymentRoutingConfig struct {
	// CurrentVersion is the version that takes new executions: the only
	// version with active workers (nil when several have, or none).
	CurrentVersion *WorkerDeploymentVersion
	// RampingVersion is never set (Tether has no ramping).
	RampingVersion *WorkerDeploymentVersion
	// RampingVersionPercentage is 0.
	RampingVersionPercentage float32
	// CurrentVersionChangedTime is when the current version's oldest live
	// worker session started.
	CurrentVersionChangedTime time.Time
}

// WorkerDeploymentInfo describes a deployment.
type WorkerDeploymentInfo struct {
	// Name is the deployment's name.
	Name string
	// CreateTime is when its oldest live worker session started.
	CreateTime time.Time
	// VersionSummaries are the versions that have active workers.
	VersionSummaries []WorkerDeploymentVersionSummary
	// RoutingConfig says which version takes new executions.
	RoutingConfig WorkerDeploymentRoutingConfig
	// LastModifierIdentity is empty.
	LastModifierIdentity string
	// ManagerIdentity is empty.
	ManagerIdentity string
}

// WorkerDeploymentDescribeResponse is WorkerDeploymentHandle.Describe's answer.
type WorkerDeploymentDescribeResponse struct {
	// ConflictToken is empty (Tether keeps no routing state).
	ConflictToken []byte
	// Info describes the deployment.
	Info WorkerDeploymentInfo
}

// WorkerDeploymentSetCurrentVersionOptions are the options of
// WorkerDeploymentHandle.SetCurrentVersion.
type WorkerDeploymentSetCurrentVersionOptions struct {
	// BuildID is the build of the deployment to make current.
	BuildID string
	// ConflictToken is accepted and not checked.
	ConflictToken []byte
	// Identity is accepted and not recorded.
	Identity string
	// IgnoreMissingTaskQueues is accepted (Tether checks no task queues).
	IgnoreMissingTaskQueues bool
	// AllowNoPollers lets a version without active workers be made current.
	AllowNoPollers bool
}

// WorkerDeploymentSetCurrentVersionResponse is SetCurrentVersion's answer.
type WorkerDeploymentSetCurrentVersionResponse struct {
	// ConflictToken is empty.
	ConflictToken []byte
	// PreviousVersion is nil (Tether keeps no routing state).
	PreviousVersion *WorkerDeploymentVersion
}

// WorkerDeploymentSetRampingVersionOptions are the options of
// WorkerDeploymentHandle.SetRampingVersion.
type WorkerDeploymentSetRampingVersionOptions struct {
	// BuildID is the build to ramp.
	BuildID string
	// Percentage is the share of new executions it would take.
	Percentage float32
	// ConflictToken is accepted and not checked.
	ConflictToken []byte
	// Identity is accepted and not recorded.
	Identity string
	// IgnoreMissingTaskQueues is accepted.
	IgnoreMissingTaskQueues bool
	// AllowNoPollers is accepted.
	AllowNoPollers bool
}

// WorkerDeploymentSetRampingVersionResponse is SetRampingVersion's answer.
type WorkerDeploymentSetRampingVersionResponse struct {
	// ConflictToken is empty.
	ConflictToken []byte
	// PreviousVersion is nil.
	PreviousVersion *WorkerDeploymentVersion
	// PreviousPercentage is 0.
	PreviousPercentage float32
}

// WorkerDeploymentListOptions are the options of WorkerDeploymentClient.List.
type WorkerDeploymentListOptions struct {
	// PageSize is accepted (the list is read whole).
	PageSize int
}

// WorkerDeploymentListEntry is one deployment of a List.
type WorkerDeploymentListEntry struct {
	// Name is the deployment's name.
	Name string
	// CreateTime is when its oldest live worker session started.
	CreateTime time.Time
	// RoutingConfig says which version takes new executions.
	RoutingConfig WorkerDeploymentRoutingConfig
}

// WorkerDeploymentListIterator iterates over a List's deployments.
type WorkerDeploymentListIterator interface {
	// HasNext reports whether there is another deployment.
	HasNext() bool
	// Next returns the next deployment.
	Next() (*WorkerDeploymentListEntry, error)
}

// WorkerDeploymentHandle is one deployment (Temporal's, in part: Describe,
// SetCurrentVersion, SetRampingVersion).
type WorkerDeploymentHandle interface {
	// Describe returns the deployment's versions and which one takes new
	// executions.
	Describe(ctx context.Context, options WorkerDeploymentDescribeOptions) (WorkerDeploymentDescribeResponse, error)
	// SetCurrentVersion checks that BuildID's version is the one that
	// takes new executions: it succeeds when the active workers of the
	// deployment are all of that version (Tether routes a new execution to
	// whichever worker polls first and pins it to that worker's build id),
	// and fails with ErrVersionNotCurrent naming the others otherwise.
	SetCurrentVersion(ctx context.Context, options WorkerDeploymentSetCurrentVersionOptions) (WorkerDeploymentSetCurrentVersionResponse, error)
	// SetRampingVersion fails with ErrVersionNotCurrent unless Percentage
	// is 0 (Tether cannot split new executions between versions).
	SetRampingVersion(ctx context.Context, options WorkerDeploymentSetRampingVersionOptions) (WorkerDeploymentSetRampingVersionResponse, error)
}

// WorkerDeploymentClient is Temporal's client of worker deployments, over
// Tether's build ids: a deployment is the worker sessions whose build id
// is "<name>.<build>" (worker.DeploymentOptions sets it), a version is one
// build id.
type WorkerDeploymentClient interface {
	// List returns the deployments that have active workers.
	List(ctx context.Context, options WorkerDeploymentListOptions) (WorkerDeploymentListIterator, error)
	// GetHandle returns the deployment name's handle (not checked).
	GetHandle(name string) WorkerDeploymentHandle
}

// WorkerDeploymentClient returns the client of worker deployments
// (Temporal's Client.WorkerDeploymentClient).
func (c *TetherClient) WorkerDeploymentClient() WorkerDeploymentClient {
	return deploymentClient{c: c}
}

type deploymentClient struct{ c *TetherClient }

type deploymentHandle struct {
	c    *TetherClient
	name string
}

// activeVersions returns the versions of the active workers of the
// namespace by deployment, each with its oldest session's start.
func (c *TetherClient) activeVersions(ctx context.Context) (map[string]map[WorkerDeploymentVersion]time.Time, error) {
	out := map[string]map[WorkerDeploymentVersion]time.Time{}
	token := ""
	for {
		page, err := c.ListWorkers(ctx, WorkerListOptions{State: api.WorkerActive, PageToken: token})
		if err != nil {
			return nil, fmt.Errorf("tether: worker deployments: %w", err)
		}
		for _, w := range page.Workers {
			v, ok := deployment.FromBuildID(w.BuildID)
			if !ok {
				continue
			}
			if out[v.DeploymentName] == nil {
				out[v.DeploymentName] = map[WorkerDeploymentVersion]time.Time{}
			}
			if t, seen := out[v.DeploymentName][v]; !seen || w.CreatedAt.Before(t) {
				out[v.DeploymentName][v] = w.CreatedAt
			}
		}
		if page.NextPageToken == "" {
			return out, nil
		}
		token = page.NextPageToken
	}
}

// info describes a deployment from its versions' oldest session starts.
func deploymentInfo(name string, versions map[WorkerDeploymentVersion]time.Time) WorkerDeploymentInfo {
	info := WorkerDeploymentInfo{Name: name}
	for v, t := range versions {
		info.VersionSummaries = append(info.VersionSummaries, WorkerDeploymentVersionSummary{Version: v, CreateTime: t})
		if info.CreateTime.IsZero() || t.Before(info.CreateTime) {
			info.CreateTime = t
		}
	}
	slices.SortFunc(info.VersionSummaries, func(a, b WorkerDeploymentVersionSummary) int {
		if c := a.CreateTime.Compare(b.CreateTime); c != 0 {
			return c
		}
		return strings.Compare(a.Version.BuildID, b.Version.BuildID)
	})
	if len(info.VersionSummaries) == 1 {
		v := info.VersionSummaries[0]
		info.RoutingConfig = WorkerDeploymentRoutingConfig{CurrentVersion: &v.Version, CurrentVersionChangedTime: v.CreateTime}
	}
	return info
}

func (d deploymentClient) List(ctx context.Context, _ WorkerDeploymentListOptions) (WorkerDeploymentListIterator, error) {
	all, err := d.c.activeVersions(ctx)
	if err != nil {
		return nil, err
	}
	it := &deploymentIterator{}
	for name, versions := range all {
		info := deploymentInfo(name, versions)
		it.entries = append(it.entries, &WorkerDeploymentListEntry{Name: name, CreateTime: info.CreateTime, RoutingConfig: info.RoutingConfig})
	}
	slices.SortFunc(it.entries, func(a, b *WorkerDeploymentListEntry) int { return strings.Compare(a.Name, b.Name) })
	return it, nil
}

func (d deploymentClient) GetHandle(name string) WorkerDeploymentHandle {
	return deploymentHandle{c: d.c, name: name}
}

type deploymentIterator struct {
	entries []*WorkerDeploymentListEntry
}

func (it *deploymentIterator) HasNext() bool { return len(it.entries) > 0 }

func (it *deploymentIterator) Next() (*WorkerDeploymentListEntry, error) {
	if len(it.entries) == 0 {
		return nil, errors.New("tether: worker deployments: no more entries")
	}
	e := it.entries[0]
	it.entries = it.entries[1:]
	return e, nil
}

func (h deploymentHandle) Describe(ctx context.Context, _ WorkerDeploymentDescribeOptions) (WorkerDeploymentDescribeResponse, error) {
	all, err := h.c.activeVersions(ctx)
	if err != nil {
		return WorkerDeploymentDescribeResponse{}, err
	}
	if len(all[h.name]) == 0 {
		return WorkerDeploymentDescribeResponse{}, fmt.Errorf("tether: worker deployment %q has no active workers: %w", h.name, ErrNotFound)
	}
	return WorkerDeploymentDescribeResponse{Info: deploymentInfo(h.name, all[h.name])}, nil
}

// checkOnly checks that buildID's version is the deployment's only
// version with active workers.
func (h deploymentHandle) checkOnly(ctx context.Context, buildID string, allowNoPollers bool) error {
	if buildID == "" {
		return errors.New("tether: worker deployment: BuildID is required")
	}
	all, err := h.c.activeVersions(ctx)
	if err != nil {
		return err
	}
	want := WorkerDeploymentVersion{DeploymentName: h.name, BuildID: buildID}
	var others []string
	found := false
	for v := range all[h.name] {
		if v == want {
			found = true
			continue
		}
		others = append(others, v.String())
	}
	slices.Sort(others)
	switch {
	case !found && !allowNoPollers:
		return fmt.Errorf("tether: worker deployment version %s has no active workers (AllowNoPollers skips this check): %w", want, ErrNotFound)
	case len(others) > 0:
		return fmt.Errorf("tether: worker deployment version %s: %w: %s (stop them, or keep them and use workflow.GetVersion)", want, ErrVersionNotCurrent, strings.Join(others, ", "))
	}
	return nil
}

func (h deploymentHandle) SetCurrentVersion(ctx context.Context, options WorkerDeploymentSetCurrentVersionOptions) (WorkerDeploymentSetCurrentVersionResponse, error) {
	if err := h.checkOnly(ctx, options.BuildID, options.AllowNoPollers); err != nil {
		return WorkerDeploymentSetCurrentVersionResponse{}, err
	}
	return WorkerDeploymentSetCurrentVersionResponse{}, nil
}

func (h deploymentHandle) SetRampingVersion(_ context.Context, options WorkerDeploymentSetRampingVersionOptions) (WorkerDeploymentSetRampingVersionResponse, error) {
	if options.Percentage != 0 {
		return WorkerDeploymentSetRampingVersionResponse{}, fmt.Errorf("tether: worker deployment %q: ramping %s.%s to %v%%: %w (Tether cannot split new executions between versions)",
			h.name, h.name, options.BuildID, options.Percentage, ErrVersionNotCurrent)
	}
	return WorkerDeploymentSetRampingVersionResponse{}, nil
}
