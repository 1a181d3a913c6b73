package main

import (
	"github.com/spf13/cobra"

	"github.com/tetherhq/tether/api"
)

// searchAttributeCommand is `tether search-attribute list|create|delete`,
// in the --namespace namespace.
func (c *cli) searchAttributeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "search-attribute",
		Aliases: []string{"sa"},
		Short:   "list, create and delete the search attributes of a namespace",
		Long: `Search attributes are typed values workflows carry (set at start with
--search-attributes, or by workflow.UpsertSearchAttributes) that list queries
select by (tether workflow list --query). Each is registered in the namespace
(--namespace) with a type: keyword, text, int, double, bool, datetime or
keyword_list. Creating and deleting need an admin key.`,
		Example: `  tether search-attribute create CustomerId --type keyword
  tether search-attribute list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(c.searchAttributeList(), c.searchAttributeCreate(), c.searchAttributeDelete())
	return cmd
}

func (c *cli) printSearchAttributes(list []api.SearchAttribute) error {
	if c.json() {
		if list == nil {
			list = []api.SearchAttribute{}
		}
		return c.printJSON(api.ListSearchAttributesResponse{SearchAttributes: list})
	}
	rows := [][]string{{"NAME", "TYPE", "CREATED"}}
	for _, a := range list {
		rows = append(rows, []string{a.Name, a.Type, timeText(a.CreatedAt)})
	}
	return c.table(rows)
}

func (c *cli) searchAttributeList() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "list the namespace's search attributes",
		Example: `  tether search-attribute list
  tether search-attribute list -n billing -o json | jq -r '.search_attributes[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			list, err := cl.ListSearchAttributes(cmd.Context())
			if err != nil {
				return apiError(err)
			}
			return c.printSearchAttributes(list)
		},
	}
}

func (c *cli) searchAttributeCreate() *cobra.Command {
	var typ string
	cmd := &cobra.Command{
		Use:     "create NAME --type TYPE",
		Short:   "register a search attribute",
		Example: `  tether search-attribute create Amount --type int`,
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !contains(api.SearchAttributeTypes(), typ) {
				return usageErrorf("--type must be one of %v, not %q", api.SearchAttributeTypes(), typ)
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			sa, err := cl.RegisterSearchAttribute(cmd.Context(), args[0], typ)
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(sa)
			}
			return c.fields("name", sa.Name, "type", sa.Type, "created_at", timeText(sa.CreatedAt))
		},
	}
	cmd.Flags().StringVar(&typ, "type", "", "keyword, text, int, double, bool, datetime or keyword_list (required)")
	return cmd
}

func (c *cli) searchAttributeDelete() *cobra.Command {
	return &cobra.Command{
		Use:     "delete NAME",
		Short:   "unregister a search attribute (workflows keep their values)",
		Example: `  tether search-attribute delete Amount`,
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			if err := cl.DeleteSearchAttribute(cmd.Context(), args[0]); err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(map[string]string{"deleted": args[0]})
			}
			return c.fields("deleted", args[0])
		},
	}
}
