package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherhq/tether/api"
)

// namespaceCommand is `tether namespace list|describe|create|update|delete`.
// These commands name the namespace as an argument; --namespace is not used.
func (c *cli) namespaceCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "namespace",
		Aliases: []string{"ns"},
		Short:   "list, describe, create, update and delete namespaces",
		Long: `Manage namespaces over the REST API (with keys required: an admin key of every
namespace for list, create and delete, of the namespace for describe and
update). The namespace is an argument; the global --namespace is not used.`,
		Example: `  tether namespace create billing --description "billing team" --retention 720h
  tether namespace list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(c.namespaceList(), c.namespaceDescribe(), c.namespaceCreate(), c.namespaceUpdate(), c.namespaceDelete())
	return cmd
}

// printNamespaces prints namespaces as a table (or JSON).
func (c *cli) printNamespaces(ns []api.Namespace) error {
	if c.json() {
		if ns == nil {
			ns = []api.Namespace{}
		}
		return c.printJSON(api.ListNamespacesResponse{Namespaces: ns})
	}
	rows := [][]string{{"NAME", "RETENTION", "CREATED", "DESCRIPTION"}}
	for _, n := range ns {
		rows = append(rows, []string{n.Name, retentionText(n.Retention), timeText(n.CreatedAt), n.Description})
	}
	return c.table(rows)
}

// retentionText is a namespace's retention for a table.
func retentionText(d *api.Duration) string {
	if d == nil || *d == 0 {
		return "forever"
	}
	return d.D().String()
}

// printNamespace prints one namespace.
func (c *cli) printNamespace(n *api.Namespace) error {
	if c.json() {
		return c.printJSON(n)
	}
	return c.fields("name", n.Name, "description", n.Description, "retention", retentionText(n.Retention), "created_at", timeText(n.CreatedAt))
}

func (c *cli) namespaceList() *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "list every namespace",
		Example: `  tether namespace list -o json | jq -r '.namespaces[].name'`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			ns, err := cl.ListNamespaces(cmd.Context())
			if err != nil {
				return apiError(err)
			}
			return c.printNamespaces(ns)
		},
	}
}

func (c *cli) namespaceDescribe() *cobra.Command {
	return &cobra.Command{
		Use:     "describe NAME",
		Short:   "describe a namespace",
		Example: `  tether namespace describe billing`,
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			n, err := cl.DescribeNamespace(cmd.Context(), args[0])
			if err != nil {
				return apiError(err)
			}
			return c.printNamespace(n)
		},
	}
}

func (c *cli) namespaceCreate() *cobra.Command {
	var description string
	var retention time.Duration
	cmd := &cobra.Command{
		Use:   "create NAME [--description TEXT] [--retention D]",
		Short: "create a namespace",
		Example: `  tether namespace create billing
  tether namespace create billing --description "billing team" --retention 720h`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			req := api.CreateNamespaceRequest{Name: args[0], Description: description}
			if cmd.Flags().Changed("retention") {
				d := api.Duration(retention)
				req.Retention = &d
			}
			n, err := cl.CreateNamespace(cmd.Context(), req)
			if err != nil {
				return apiError(err)
			}
			return c.printNamespace(n)
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "what the namespace is for")
	cmd.Flags().DurationVar(&retention, "retention", 0, "how long closed workflows are kept (default: forever)")
	return cmd
}

func (c *cli) namespaceUpdate() *cobra.Command {
	var description string
	var retention time.Duration
	cmd := &cobra.Command{
		Use:   "update NAME [--description TEXT] [--retention D]",
		Short: "change a namespace's description or retention",
		Example: `  tether namespace update billing --retention 168h
  tether namespace update billing --retention 0s   # keep closed workflows forever`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var req api.UpdateNamespaceRequest
			if cmd.Flags().Changed("description") {
				req.Description = &description
			}
			if cmd.Flags().Changed("retention") {
				d := api.Duration(retention)
				req.Retention = &d
			}
			if req.Description == nil && req.Retention == nil {
				return usageErrorf("nothing to change: give --description or --retention")
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			n, err := cl.UpdateNamespace(cmd.Context(), args[0], req)
			if err != nil {
				return apiError(err)
			}
			return c.printNamespace(n)
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "what the namespace is for")
	cmd.Flags().DurationVar(&retention, "retention", 0, "how long closed workflows are kept (0s: forever)")
	return cmd
}

func (c *cli) namespaceDelete() *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "delete an empty namespace",
		Long: `Delete a namespace with its worker sessions and API keys. A namespace that
still holds workflow instances, and "default", are refused (exit 4).`,
		Example: `  tether namespace delete billing`,
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			if err := cl.DeleteNamespace(cmd.Context(), args[0]); err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(map[string]any{"name": args[0], "deleted": true})
			}
			fmt.Fprintf(c.stdout, "deleted namespace %s\n", args[0])
			return nil
		},
	}
}
