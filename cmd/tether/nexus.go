package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tetherhq/tether/api"
)

// operatorCommand is `tether operator nexus endpoint create|list|delete`,
// Temporal's `temporal operator nexus endpoint …` with the same flags.
func (c *cli) operatorCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "operate the server: Nexus endpoints",
		Example: `  tether operator nexus endpoint create --name orders --target-namespace billing --target-task-queue order-handlers
  tether operator nexus endpoint list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	nexus := &cobra.Command{
		Use:   "nexus",
		Short: "manage Nexus endpoints",
		Example: `  tether operator nexus endpoint create --name orders --target-namespace billing --target-task-queue order-handlers
  tether operator nexus endpoint list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	endpoint := &cobra.Command{
		Use:   "endpoint",
		Short: "create, list and delete Nexus endpoints",
		Long: `A Nexus endpoint maps a name, which caller workflows give to
workflow.NewNexusClient, to the namespace and task queue whose workers handle
its operations (docs/sdk.md, "Nexus"). Needs an admin key of every namespace
when the server requires keys.`,
		Example: `  tether operator nexus endpoint create --name orders --target-namespace billing --target-task-queue order-handlers
  tether operator nexus endpoint list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	endpoint.AddCommand(c.nexusEndpointCreate(), c.nexusEndpointList(), c.nexusEndpointDelete())
	nexus.AddCommand(endpoint)
	cmd.AddCommand(nexus)
	return cmd
}

func (c *cli) nexusEndpointCreate() *cobra.Command {
	var req api.CreateNexusEndpointRequest
	var descFile string
	cmd := &cobra.Command{
		Use:   "create --name E --target-namespace NS --target-task-queue Q",
		Short: "create a Nexus endpoint",
		Example: `  tether operator nexus endpoint create --name my-nexus-endpoint-name \
    --target-namespace my-target-namespace --target-task-queue my-handler-task-queue`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if descFile != "" {
				raw, err := os.ReadFile(descFile)
				if err != nil {
					return usageErrorf("--description-file: %v", err)
				}
				req.Description = string(raw)
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			e, err := cl.CreateNexusEndpoint(cmd.Context(), req)
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(e)
			}
			fmt.Fprintf(c.stdout, "created nexus endpoint %s → %s/%s\n", e.Name, e.TargetNamespace, e.TargetTaskQueue)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Name, "name", "", "the endpoint's name")
	f.StringVar(&req.TargetNamespace, "target-namespace", "", "the namespace of the handler workers")
	f.StringVar(&req.TargetTaskQueue, "target-task-queue", "", "the task queue of the handler workers")
	f.StringVar(&req.Description, "description", "", "free text for people")
	f.StringVar(&descFile, "description-file", "", "a file holding the description")
	return cmd
}

func (c *cli) nexusEndpointList() *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "list every Nexus endpoint",
		Example: `  tether operator nexus endpoint list -o json | jq -r '.endpoints[].name'`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			es, err := cl.ListNexusEndpoints(cmd.Context())
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				if es == nil {
					es = []api.NexusEndpoint{}
				}
				return c.printJSON(api.ListNexusEndpointsResponse{Endpoints: es})
			}
			rows := [][]string{{"NAME", "TARGET NAMESPACE", "TARGET TASK QUEUE", "CREATED"}}
			for _, e := range es {
				rows = append(rows, []string{e.Name, e.TargetNamespace, e.TargetTaskQueue, timeText(e.CreatedAt)})
			}
			return c.table(rows)
		},
	}
}

func (c *cli) nexusEndpointDelete() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:     "delete --name E",
		Short:   "delete a Nexus endpoint",
		Example: `  tether operator nexus endpoint delete --name orders`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return usageErrorf("--name is required")
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			if err := cl.DeleteNexusEndpoint(cmd.Context(), name); err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(map[string]any{"name": name, "deleted": true})
			}
			fmt.Fprintf(c.stdout, "deleted nexus endpoint %s\n", name)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the endpoint's name")
	return cmd
}
