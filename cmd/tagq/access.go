package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// ---- access: principals, API keys and permissions (tagqd --auth)

func (c *cli) accessCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "access", Short: "Manage principals, API keys and permissions (tagqd --auth)",
		Long: "Principals are who calls tagq; each has API keys (tagq_<id>_<secret>, shown once) and a permission " +
			"(one of EMQ's levels) per queue or queue prefix. An admin principal may do everything."}
	cmd.AddCommand(c.principalsCmd(), c.keysCmd(), c.permissionsCmd())
	return cmd
}

func (c *cli) principalsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "principals", Short: "Create, list, show and delete principals"}
	var admin bool
	var certNames []string
	var maxQueues int32
	create := &cobra.Command{
		Use: "create NAME", Short: "Create a principal (then issue it a key and set its permissions)", Args: exactArgs(1, "NAME"),
		Example: "  tagq access principals create billing-service --max-queues 10\n" +
			"  tagq access principals create ops --admin\n  tagq access principals create edge --cert-name edge.example.com",
		RunE: func(cmd *cobra.Command, args []string) error {
			p := &tagqv1.Principal{Name: args[0], CertNames: certNames, Kind: tagqv1.Principal_KIND_USER}
			if admin {
				p.Kind = tagqv1.Principal_KIND_ADMIN
			}
			if cmd.Flags().Changed("max-queues") {
				p.MaxQueues = &maxQueues
			}
			r, err := c.client.Access.CreatePrincipal(cmd.Context(), &tagqv1.CreatePrincipalRequest{Principal: p})
			if err != nil {
				return wrapErr(err)
			}
			return c.printPrincipals(r.GetPrincipal())
		},
	}
	create.Flags().BoolVar(&admin, "admin", false, "an admin: may do everything, managing access included")
	create.Flags().StringArrayVar(&certNames, "cert-name", nil, "a client-certificate name (subject CN or SAN) that authenticates as it; repeatable")
	create.Flags().Int32Var(&maxQueues, "max-queues", 0, "how many queues it may create (default: the server's, 100)")

	list := &cobra.Command{
		Use: "list", Short: "List principals", Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := c.client.Access.ListPrincipals(cmd.Context(), &tagqv1.ListPrincipalsRequest{})
			if err != nil {
				return wrapErr(err)
			}
			return c.printPrincipals(r.GetPrincipals()...)
		},
	}
	get := &cobra.Command{
		Use: "get NAME", Short: "Show a principal", Args: exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := c.client.Access.GetPrincipal(cmd.Context(), &tagqv1.GetPrincipalRequest{Name: args[0]})
			if err != nil {
				return wrapErr(err)
			}
			return c.printPrincipals(r.GetPrincipal())
		},
	}
	del := &cobra.Command{
		Use: "delete NAME", Short: "Delete a principal with its keys and permissions (its queues stay)", Args: exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := c.client.Access.DeletePrincipal(cmd.Context(), &tagqv1.DeletePrincipalRequest{Name: args[0]})
			return wrapErr(err)
		},
	}
	cmd.AddCommand(create, list, get, del)
	return cmd
}

func (c *cli) printPrincipals(ps ...*tagqv1.Principal) error {
	return printAll(c, ps, func(w *tabwriter.Writer) {
		fmt.Fprintln(w, "NAME\tKIND\tMAX QUEUES\tCREATED QUEUES\tCERT NAMES\tCREATED")
		for _, p := range ps {
			max := "default"
			if p.MaxQueues != nil {
				max = fmt.Sprint(p.GetMaxQueues())
			}
			kind := strings.ToLower(strings.TrimPrefix(p.GetKind().String(), "KIND_"))
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\n", p.GetName(), kind, max, p.GetCreatedQueues(),
				strings.Join(p.GetCertNames(), ","), p.GetCreateTime().AsTime().Format(time.RFC3339))
		}
	})
}

func (c *cli) keysCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Issue, list and revoke API keys",
		Long: "Rotate a key by issuing a new one, moving its users to it, then revoking the old one. " +
			"A principal may manage its own keys; an admin, anyone's."}
	issue := &cobra.Command{
		Use: "issue PRINCIPAL", Short: "Issue an API key: it is printed once and stored only as a hash", Args: exactArgs(1, "PRINCIPAL"),
		Example: "  export TAGQ_API_KEY=$(tagq access keys issue billing-service)",
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := c.client.Access.IssueKey(cmd.Context(), &tagqv1.IssueKeyRequest{Principal: args[0]})
			if err != nil {
				return wrapErr(err)
			}
			if c.output == "json" {
				return c.print([]proto.Message{r}, nil)
			}
			fmt.Fprintln(c.stdout, r.GetApiKey())
			return nil
		},
	}
	list := &cobra.Command{
		Use: "list PRINCIPAL", Short: "List a principal's keys (ids, never the keys)", Args: exactArgs(1, "PRINCIPAL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := c.client.Access.ListKeys(cmd.Context(), &tagqv1.ListKeysRequest{Principal: args[0]})
			if err != nil {
				return wrapErr(err)
			}
			return printAll(c, r.GetKeys(), func(w *tabwriter.Writer) {
				fmt.Fprintln(w, "KEY ID\tPRINCIPAL\tCREATED")
				for _, k := range r.GetKeys() {
					fmt.Fprintf(w, "%s\t%s\t%s\n", k.GetKeyId(), k.GetPrincipal(), k.GetCreateTime().AsTime().Format(time.RFC3339))
				}
			})
		},
	}
	revoke := &cobra.Command{
		Use: "revoke PRINCIPAL KEY_ID", Short: "Revoke a key (refused within about a second on every tagqd)", Args: exactArgs(2, "PRINCIPAL KEY_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := c.client.Access.RevokeKey(cmd.Context(), &tagqv1.RevokeKeyRequest{Principal: args[0], KeyId: args[1]})
			return wrapErr(err)
		},
	}
	cmd.AddCommand(issue, list, revoke)
	return cmd
}

// parseLevel reads a level as the CLI takes it: send-handle, SEND_HANDLE
// or PERMISSION_SEND_HANDLE.
func parseLevel(s string) (tagqv1.Permission, error) {
	name := "PERMISSION_" + strings.ReplaceAll(strings.TrimPrefix(strings.ToUpper(s), "PERMISSION_"), "-", "_")
	v, ok := tagqv1.Permission_value[name]
	if !ok || v == 0 {
		var names []string
		for i := int32(1); ; i++ {
			n, ok := tagqv1.Permission_name[i]
			if !ok {
				break
			}
			names = append(names, strings.TrimPrefix(n, "PERMISSION_"))
		}
		return 0, usageError{fmt.Errorf("permission %q is not one of %s", s, strings.Join(names, ", "))}
	}
	return tagqv1.Permission(v), nil
}

func level(p tagqv1.Permission) string { return strings.TrimPrefix(p.String(), "PERMISSION_") }

func (c *cli) permissionsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "permissions", Short: "Set, revoke, query and list permissions",
		Long: "A permission is one of EMQ's levels for a principal on a queue or a prefix (orders-*): NONE, SEND, RECEIVE, " +
			"SEND_RECEIVE, HANDLE, SEND_HANDLE, GET_QUEUE_INFO, USE_QUEUE, ADMIN_QUEUE, PEEK, DELETE_PEEK, FULL_CONTROL. " +
			"The exact name wins over prefixes, a longer prefix over a shorter."}
	var tags []string
	set := &cobra.Command{
		Use: "set PRINCIPAL QUEUE PERMISSION", Short: "Set a principal's level on a queue or prefix", Args: exactArgs(3, "PRINCIPAL QUEUE PERMISSION"),
		Example: "  tagq access permissions set billing-service 'orders-*' SEND\n" +
			"  tagq access permissions set billing-service orders HANDLE --tag billing",
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := parseLevel(args[2])
			if err != nil {
				return err
			}
			r, err := c.client.Access.SetPermission(cmd.Context(), &tagqv1.SetPermissionRequest{Grant: &tagqv1.PermissionGrant{
				Principal: args[0], Queue: args[1], Permission: p, Tags: tags}})
			if err != nil {
				return wrapErr(err)
			}
			return c.printGrants(r.GetGrant())
		},
	}
	set.Flags().StringArrayVar(&tags, "tag", nil, "receive only from this tag (repeatable); default: any tag")
	revoke := &cobra.Command{
		Use: "revoke PRINCIPAL QUEUE", Short: "Remove a principal's level on exactly that queue or prefix", Args: exactArgs(2, "PRINCIPAL QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := c.client.Access.RevokePermission(cmd.Context(), &tagqv1.RevokePermissionRequest{Principal: args[0], Queue: args[1]})
			return wrapErr(err)
		},
	}
	var principal, queue string
	get := &cobra.Command{
		Use: "get QUEUE", Short: "What a principal (default: you) may do on a queue, and why", Args: exactArgs(1, "QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := c.client.Access.GetPermission(cmd.Context(), &tagqv1.GetPermissionRequest{Principal: principal, Queue: args[0]})
			if err != nil {
				return wrapErr(err)
			}
			if c.output == "json" {
				return c.print([]proto.Message{r}, nil)
			}
			w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "permission\t%s\nfrom\t%s\n", level(r.GetPermission()), r.GetSource())
			if len(r.GetTags()) > 0 {
				fmt.Fprintf(w, "tags\t%s\n", strings.Join(r.GetTags(), ","))
			}
			return w.Flush()
		},
	}
	get.Flags().StringVar(&principal, "principal", "", "whose permission (default: the caller's)")
	list := &cobra.Command{
		Use: "list", Short: "List permissions set", Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := c.client.Access.ListPermissions(cmd.Context(), &tagqv1.ListPermissionsRequest{Principal: principal, Queue: queue})
			if err != nil {
				return wrapErr(err)
			}
			return c.printGrants(r.GetGrants()...)
		},
	}
	list.Flags().StringVar(&principal, "principal", "", "only this principal's")
	list.Flags().StringVar(&queue, "queue", "", "only those on exactly this queue or prefix")
	cmd.AddCommand(set, revoke, get, list)
	return cmd
}

func (c *cli) printGrants(gs ...*tagqv1.PermissionGrant) error {
	return printAll(c, gs, func(w *tabwriter.Writer) {
		fmt.Fprintln(w, "PRINCIPAL\tQUEUE\tPERMISSION\tTAGS")
		for _, g := range gs {
			tags := strings.Join(g.GetTags(), ",")
			if tags == "" {
				tags = "any"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", g.GetPrincipal(), g.GetQueue(), level(g.GetPermission()), tags)
		}
	})
}
