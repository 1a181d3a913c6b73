package store

import (
	"context"
	"fmt"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// NexusEndpoints creates, deletes or reads Nexus endpoints (one statement
// each; storage.Namespaces.NexusEndpoints).
func (s *Store) NexusEndpoints(ctx context.Context, p *storage.NexusEndpointsParams) ([]api.NexusEndpoint, error) {
	q := gen.New(s.pool)
	switch {
	case p.Create != nil:
		e, err := q.CreateNexusEndpoint(ctx, gen.CreateNexusEndpointParams{Name: p.Create.Name,
			TargetNamespace: p.Create.TargetNamespace, TargetTaskQueue: p.Create.TargetTaskQueue,
			Description: p.Create.Description})
		if noRows(err) {
			return nil, storage.ErrNexusEndpointExists
		}
		if err != nil {
			return nil, fmt.Errorf("create nexus endpoint: %w", err)
		}
		return []api.NexusEndpoint{toNexusEndpoint(e)}, nil
	case p.Delete:
		n, err := q.DeleteNexusEndpoint(ctx, p.Name)
		if err != nil {
			return nil, fmt.Errorf("delete nexus endpoint: %w", err)
		}
		if n == 0 {
			return nil, storage.ErrNotFound
		}
		return nil, nil
	case p.Name != "":
		e, err := q.GetNexusEndpoint(ctx, p.Name)
		if noRows(err) {
			return nil, storage.ErrNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("get nexus endpoint: %w", err)
		}
		return []api.NexusEndpoint{toNexusEndpoint(e)}, nil
	}
	rows, err := q.ListNexusEndpoints(ctx)
	if err != nil {
		return nil, fmt.Errorf("list nexus endpoints: %w", err)
	}
	out := make([]api.NexusEndpoint, 0, len(rows))
	for _, e := range rows {
		out = append(out, toNexusEndpoint(e))
	}
	return out, nil
}

func toNexusEndpoint(e gen.NexusEndpoint) api.NexusEndpoint {
	return api.NexusEndpoint{Name: e.Name, TargetNamespace: e.TargetNamespace, TargetTaskQueue: e.TargetTaskQueue,
		Description: e.Description, CreatedAt: e.CreatedAt}
}
