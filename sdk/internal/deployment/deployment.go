// Package deployment holds Temporal's worker deployment version, shared by
// package worker (worker.DeploymentOptions) and package client (the
// deployment client), mapped onto Tether's build ids.
package deployment

import "strings"

// WorkerDeploymentVersion is Temporal's worker.WorkerDeploymentVersion: a
// deployment's name and a build of it.
type WorkerDeploymentVersion struct {
	// DeploymentName names the deployment.
	DeploymentName string
	// BuildID names the build.
	BuildID string
}

// String returns the version as Tether's build id:
// "<DeploymentName>.<BuildID>", or BuildID without a deployment name.
func (v WorkerDeploymentVersion) String() string {
	if v.DeploymentName == "" {
		return v.BuildID
	}
	return v.DeploymentName + "." + v.BuildID
}

// FromBuildID reads a worker's build id as a deployment version: the part
// before the first "." is the deployment's name (ok=false: the build id
// names no deployment).
func FromBuildID(buildID string) (v WorkerDeploymentVersion, ok bool) {
	name, build, found := strings.Cut(buildID, ".")
	if !found || name == "" || build == "" {
		return WorkerDeploymentVersion{BuildID: buildID}, false
	}
	return WorkerDeploymentVersion{DeploymentName: name, BuildID: build}, true
}
