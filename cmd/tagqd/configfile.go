package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// applyConfigFile sets flags from a YAML file of flag names and values:
//
//	grpc-addr: 0.0.0.0:9090
//	auth: true
//	redis-url: redis://redis.internal:6379/0
//
// A value applies only to a flag given neither on the command line nor by
// its environment variable (flag > environment > file > default). A key
// that is no flag, a value that is not a scalar, or one its flag refuses
// is an error naming the file and the key.
func applyConfigFile(fs *flag.FlagSet, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(raw, &values); err != nil {
		return fmt.Errorf("--config %s: not a YAML map of flag names to values: %v", path, err)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys) // errors in a stable order
	for _, k := range keys {
		if fs.Lookup(k) == nil || k == "config" || k == "version" {
			return fmt.Errorf("--config %s: %q is not a flag tagqd takes from a file", path, k)
		}
		if given[k] {
			continue
		}
		if _, set := os.LookupEnv(flagEnv(k)); set {
			continue
		}
		v, err := scalar(values[k])
		if err != nil {
			return fmt.Errorf("--config %s: %s: %v", path, k, err)
		}
		if err := fs.Set(k, v); err != nil {
			return fmt.Errorf("--config %s: %s: %v", path, k, err)
		}
	}
	return nil
}

// flagEnv is the environment variable of a flag: TAGQ_ and its name in
// upper case with _ for - (TestFlagEnvNames checks every flag says so).
func flagEnv(name string) string {
	return "TAGQ_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

func scalar(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(v), nil
	case nil:
		return "", errors.New("no value")
	}
	return "", fmt.Errorf("a %T, not a single value", v)
}
