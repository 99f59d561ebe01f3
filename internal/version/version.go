// Package version tells which build of tagq is running: tagqd --version,
// tagq --version and the tagq_build_info metric.
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is set at link time by release builds:
//
//	go build -ldflags "-X github.com/tagq/tagq/internal/version.Version=v1.2.3" ./cmd/tagqd
//
// Otherwise it is the module version Go recorded (a tagged `go install`),
// or "dev".
var Version = ""

// Info is a build's identity.
type Info struct {
	Version   string // a release version, or "dev"
	Revision  string // the VCS commit (with "-dirty" for a modified tree), or "unknown"
	GoVersion string
}

// Get reads the build's identity.
func Get() Info {
	info := Info{Version: Version, Revision: "unknown", GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if info.Version == "" && ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	if ok {
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && info.Revision != "unknown" {
			info.Revision += "-dirty"
		}
	}
	return info
}

// String is the one line tagqd --version and tagq --version print after
// the program's name. A build from a git checkout (go build, go install)
// records its commit; one that recorded none (go run, -buildvcs=false as
// CI builds, a copy of the source outside git) says so instead of naming
// a revision it cannot know.
func (i Info) String() string {
	rev := "revision " + i.Revision
	if i.Revision == "unknown" {
		rev = "revision unknown: no VCS stamp (go run or -buildvcs=false or no git checkout)"
	}
	return i.Version + " (" + rev + ", " + i.GoVersion + ")"
}
