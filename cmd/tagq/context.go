package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ---- contexts: saved connection settings
//
// A context is a name for a set of connection settings (address, TLS
// files, API key) kept in the config file. Each setting is taken from the
// first of: its flag, its environment variable, the selected context, the
// default. The context is selected by --context, else TAGQ_CONTEXT, else
// the config file's current context (`tagq context use`).

// defaultAddr is the address used when no flag, variable or context gives one.
const defaultAddr = "127.0.0.1:9090"

// settings are one context's connection settings.
type settings struct {
	Addr   string `json:"addr,omitempty"`
	CA     string `json:"ca,omitempty"`
	Cert   string `json:"cert,omitempty"`
	Key    string `json:"key,omitempty"`
	TLS    bool   `json:"tls,omitempty"`
	APIKey string `json:"api_key,omitempty"`
}

// config is the config file.
type config struct {
	CurrentContext string               `json:"current_context,omitempty"`
	Contexts       map[string]*settings `json:"contexts,omitempty"`
}

// configPath is $TAGQ_CONFIG, else $XDG_CONFIG_HOME/tagq/config.json, else
// ~/.config/tagq/config.json.
func configPath() (string, error) {
	if p := os.Getenv("TAGQ_CONFIG"); p != "" {
		return p, nil
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "tagq", "config.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no config file: set TAGQ_CONFIG or HOME (%v)", err)
	}
	return filepath.Join(home, ".config", "tagq", "config.json"), nil
}

// loadConfig reads the config file at path; a missing file is an empty
// config. warn gets a warning when the file holds an API key and others
// may read it.
func loadConfig(path string, warn func(string)) (*config, error) {
	cfg := &config{Contexts: map[string]*settings{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	if err := json.Unmarshal(b, cfg); err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	if cfg.Contexts == nil {
		cfg.Contexts = map[string]*settings{}
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 && warn != nil {
		for _, s := range cfg.Contexts {
			if s != nil && s.APIKey != "" {
				warn(fmt.Sprintf("warning: %s holds API keys and others may read it (mode %#o); run chmod 600 %s",
					path, st.Mode().Perm(), path))
				break
			}
		}
	}
	return cfg, nil
}

// save writes cfg to path with mode 0600 (its directory 0700 if new), by a
// rename, so that a reader never sees half a file.
func (cfg *config) save(path string) error {
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".config-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after a successful rename there is nothing to remove
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// connectionFlags adds the flags of the connection settings to root.
// Their defaults are empty: resolve fills in what no flag gave.
func (c *cli) connectionFlags(root *cobra.Command) {
	pf := root.PersistentFlags()
	pf.StringVar(&c.addr, "addr", "", "tagqd gRPC address (TAGQ_ADDR; default "+defaultAddr+")")
	pf.StringVar(&c.ca, "ca", "", "TLS: PEM CA certificates to verify tagqd with (TAGQ_CA)")
	pf.StringVar(&c.cert, "cert", "", "TLS: PEM client certificate, for a tagqd that requires one (TAGQ_CERT)")
	pf.StringVar(&c.key, "key", "", "TLS: PEM key of --cert (TAGQ_KEY)")
	pf.BoolVar(&c.tls, "tls", false, "TLS with the system's CA certificates (implied by --ca, --cert and --key) (TAGQ_TLS=true)")
	pf.StringVar(&c.apiKey, "api-key", "",
		"API key for a tagqd with --auth; prefer the environment variable or a context, which no process listing shows (TAGQ_API_KEY)")
	pf.StringVar(&c.contextName, "context", "",
		"saved connection settings to use for this command (TAGQ_CONTEXT; default: the one chosen by tagq context use)")
}

// resolve settles each connection setting by precedence: flag, then
// environment variable, then the selected context, then the default.
func (c *cli) resolve(flags *pflag.FlagSet) error {
	name := c.contextName
	explicit := flags.Changed("context")
	if !explicit && os.Getenv("TAGQ_CONTEXT") != "" {
		name, explicit = os.Getenv("TAGQ_CONTEXT"), true
	}
	ctxSettings := &settings{}
	path, perr := configPath()
	if perr != nil && explicit {
		return perr
	}
	if perr == nil {
		cfg, err := loadConfig(path, func(s string) { fmt.Fprintln(c.stderr, "tagq:", s) })
		if err != nil {
			return err
		}
		if !explicit {
			name = cfg.CurrentContext
		}
		if name != "" {
			s, ok := cfg.Contexts[name]
			if !ok {
				return noContext(name, path)
			}
			if s != nil {
				ctxSettings = s
			}
		}
	}
	c.contextUsed = name
	pick := func(v *string, flag, env, fromContext, def string) {
		switch {
		case flags.Changed(flag):
		case os.Getenv(env) != "":
			*v = os.Getenv(env)
		case fromContext != "":
			*v = fromContext
		default:
			*v = def
		}
	}
	pick(&c.addr, "addr", "TAGQ_ADDR", ctxSettings.Addr, defaultAddr)
	pick(&c.ca, "ca", "TAGQ_CA", ctxSettings.CA, "")
	pick(&c.cert, "cert", "TAGQ_CERT", ctxSettings.Cert, "")
	pick(&c.key, "key", "TAGQ_KEY", ctxSettings.Key, "")
	pick(&c.apiKey, "api-key", "TAGQ_API_KEY", ctxSettings.APIKey, "")
	switch {
	case flags.Changed("tls"):
	case os.Getenv("TAGQ_TLS") != "":
		c.tls = os.Getenv("TAGQ_TLS") == "true"
	default:
		c.tls = ctxSettings.TLS
	}
	return nil
}

var contextName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$`)

// maskKey shows an API key's public id (tagq_<id>_) and never its secret.
var keyID = regexp.MustCompile(`^tagq_[0-9a-f]{16}_`)

func maskKey(k string) string {
	switch {
	case k == "":
		return "-"
	case keyID.MatchString(k):
		return keyID.FindString(k) + "****"
	default:
		return "****"
	}
}

func (c *cli) contextCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "context", Short: "Save, choose, list and delete connection settings (address, TLS, API key)",
		Long: "A context is a name for connection settings kept in the config file ($TAGQ_CONFIG, else\n" +
			"$XDG_CONFIG_HOME/tagq/config.json, else ~/.config/tagq/config.json; written with mode 0600).\n" +
			"Each setting comes from the first of: its flag, its environment variable, the context, the default.\n" +
			"The context is the one --context or TAGQ_CONTEXT names, else the one `tagq context use` chose.",
		// No connection: these commands only read and write the config file.
		PersistentPreRunE: func(*cobra.Command, []string) error { return c.checkOutput() },
	}
	var keyStdin bool
	set := &cobra.Command{
		Use:   "set NAME [--addr ADDR] [--ca FILE] [--cert FILE --key FILE] [--tls] [--api-key KEY | --api-key-stdin]",
		Short: "Save connection settings under a name (creates the context or changes the settings given)",
		Long: "Save the connection flags given on this command line under NAME. Flags not given keep their saved\n" +
			"value; give one empty (--ca '') to remove it. File paths are saved absolute. Environment variables\n" +
			"are not saved. --api-key-stdin reads the key from standard input, which no process listing shows.",
		Example: "  tagq context set prod --addr tagq.internal:9090 --ca prod-ca.pem\n" +
			"  printenv PROD_TAGQ_KEY | tagq context set prod --api-key-stdin\n  tagq context use prod",
		Args: exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if !contextName.MatchString(name) {
				return usageError{fmt.Errorf("context name %q: use letters, digits, '.', '_' and '-' (at most 80)", name)}
			}
			flags := cmd.Flags()
			if keyStdin && flags.Changed("api-key") {
				return usageError{errors.New("give --api-key or --api-key-stdin, not both")}
			}
			path, cfg, err := c.openConfig()
			if err != nil {
				return err
			}
			s := cfg.Contexts[name]
			created := s == nil
			if created {
				s = &settings{}
				cfg.Contexts[name] = s
			}
			if flags.Changed("addr") {
				s.Addr = c.addr
			}
			for _, f := range []struct {
				flag string
				v    string
				to   *string
			}{{"ca", c.ca, &s.CA}, {"cert", c.cert, &s.Cert}, {"key", c.key, &s.Key}} {
				if !flags.Changed(f.flag) {
					continue
				}
				*f.to = f.v
				if f.v != "" {
					if *f.to, err = filepath.Abs(f.v); err != nil {
						return err
					}
				}
			}
			if (s.Cert == "") != (s.Key == "") {
				return usageError{errors.New("a context needs both --cert and --key, or neither")}
			}
			if flags.Changed("tls") {
				s.TLS = c.tls
			}
			if flags.Changed("api-key") {
				s.APIKey = c.apiKey
			}
			if keyStdin {
				line, err := bufio.NewReader(c.stdin).ReadString('\n')
				if line = strings.TrimSpace(line); line == "" {
					return usageError{fmt.Errorf("--api-key-stdin: no key on standard input (%v)", err)}
				}
				s.APIKey = line
			}
			if err := cfg.save(path); err != nil {
				return err
			}
			verb := "changed"
			if created {
				verb = "saved"
			}
			fmt.Fprintf(c.stdout, "%s context %s in %s\n", verb, name, path)
			if cfg.CurrentContext != name {
				fmt.Fprintf(c.stdout, "use it with --context %s, or for every command: tagq context use %s\n", name, name)
			}
			return nil
		},
	}
	set.Flags().BoolVar(&keyStdin, "api-key-stdin", false, "read the API key from the first line of standard input")

	use := &cobra.Command{
		Use: "use NAME", Short: "Use a saved context for every command (until --context, TAGQ_CONTEXT or another use)",
		Args: exactArgs(1, "NAME"),
		RunE: func(_ *cobra.Command, args []string) error {
			path, cfg, err := c.openContext(args[0])
			if err != nil {
				return err
			}
			cfg.CurrentContext = args[0]
			if err := cfg.save(path); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "using context %s\n", args[0])
			return nil
		},
	}

	list := &cobra.Command{
		Use: "list", Short: "List saved contexts (API keys masked: only their public id is shown)", Args: exactArgs(0, "no arguments"),
		RunE: func(_ *cobra.Command, _ []string) error {
			_, cfg, err := c.openConfig()
			if err != nil {
				return err
			}
			names := make([]string, 0, len(cfg.Contexts))
			for n := range cfg.Contexts {
				names = append(names, n)
			}
			sort.Strings(names)
			if c.output == "json" {
				enc := json.NewEncoder(c.stdout)
				for _, n := range names {
					s := *orEmpty(cfg.Contexts[n])
					if s.APIKey != "" {
						s.APIKey = maskKey(s.APIKey)
					}
					if err := enc.Encode(struct {
						Name    string `json:"name"`
						Current bool   `json:"current"`
						settings
					}{n, n == cfg.CurrentContext, s}); err != nil {
						return err
					}
				}
				return nil
			}
			w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "CURRENT\tNAME\tADDR\tTLS\tAPI KEY")
			for _, n := range names {
				s := orEmpty(cfg.Contexts[n])
				cur := ""
				if n == cfg.CurrentContext {
					cur = "*"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", cur, n, orDash(s.Addr), tlsSummary(s), maskKey(s.APIKey))
			}
			return w.Flush()
		},
	}

	del := &cobra.Command{
		Use: "delete NAME", Short: "Delete a saved context", Args: exactArgs(1, "NAME"),
		RunE: func(_ *cobra.Command, args []string) error {
			path, cfg, err := c.openContext(args[0])
			if err != nil {
				return err
			}
			delete(cfg.Contexts, args[0])
			if cfg.CurrentContext == args[0] {
				cfg.CurrentContext = ""
			}
			if err := cfg.save(path); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "deleted context %s\n", args[0])
			return nil
		},
	}
	cmd.AddCommand(set, use, list, del)
	return cmd
}

// openContext opens the config file and checks that it holds context name.
func (c *cli) openContext(name string) (string, *config, error) {
	path, cfg, err := c.openConfig()
	if err != nil {
		return "", nil, err
	}
	if _, ok := cfg.Contexts[name]; !ok {
		return "", nil, noContext(name, path)
	}
	return path, cfg, nil
}

func noContext(name, path string) error {
	return usageError{fmt.Errorf("no context %q in %s; `tagq context list` shows the saved ones", name, path)}
}

func (c *cli) openConfig() (string, *config, error) {
	path, err := configPath()
	if err != nil {
		return "", nil, err
	}
	cfg, err := loadConfig(path, func(s string) { fmt.Fprintln(c.stderr, "tagq:", s) })
	return path, cfg, err
}

func orEmpty(s *settings) *settings {
	if s == nil {
		return &settings{}
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func tlsSummary(s *settings) string {
	var parts []string
	if s.CA != "" {
		parts = append(parts, "ca="+s.CA)
	} else if s.TLS || s.Cert != "" {
		parts = append(parts, "system CAs")
	}
	if s.Cert != "" {
		parts = append(parts, "cert="+s.Cert)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}
