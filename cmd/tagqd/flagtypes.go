package main

import "flag"

// typedFlag is a flag kept as the text it was given and parsed once every
// source (the flag, its TAGQ_* variable, the config file) has had its say,
// so a bad value's error names the flag whichever source set it. It is
// not a *flag.stringValue, so --help shows its default unquoted, and its
// usage names its type in back quotes (`duration`, `int`, `bytes`,
// `share`), which --help shows after the flag's name instead of "string".
type typedFlag struct{ p *string }

func (f typedFlag) String() string {
	if f.p == nil {
		return ""
	}
	return *f.p
}

func (f typedFlag) Set(s string) error { *f.p = s; return nil }

// typedVar defines a typedFlag; usage must name its type in back quotes.
func typedVar(fs *flag.FlagSet, p *string, name, usage string) {
	fs.Var(typedFlag{p}, name, usage)
}
