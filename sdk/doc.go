// Package sdk is the root of Tether's Go SDK; its packages mirror
// Temporal's Go SDK (docs/sdk.md, "Coming from Temporal"): client, worker,
// workflow, activity, temporal, converter, log, testsuite, mocks, enums,
// common and contrib/envconfig.
//
// Many of their types are aliases of types defined in sdk/internal, which
// go doc does not follow: the doc comment of such an alias of a struct
// lists the struct's fields, each with its type and its documentation,
// kept current by TestAliasFieldDocs (go test ./sdk -run
// TestAliasFieldDocs -update rewrites the lists).
package sdk
