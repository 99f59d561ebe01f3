package redisstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each script gets the lib.lua definitions it uses, through others too,
// and no others.
func TestScriptsCarryTheLibDefinitionsTheyUse(t *testing.T) {
	src, err := scriptFS.ReadFile("scripts/lib.lua")
	require.NoError(t, err)
	lib := parseLib(string(src))
	names := map[string]bool{}
	for _, d := range lib {
		for _, n := range d.names {
			names[n] = true
		}
	}
	require.Equal(t, strings.Count(string(src), "\nlocal "), len(names), "every top-level local is one definition")

	defines := func(code, name string) bool {
		return strings.Contains(code, "local function "+name+"(") || strings.Contains(code, "local "+name+" =")
	}
	got := lib.shake("pelexpire(k, tag, now, 1, 20)")
	for _, n := range []string{"pelexpire", "pelids", "bparse", "vscore", "vmember", "vcount", "wfield", "idms", "fmt", "VEPOCH", "VCNT"} {
		require.True(t, defines(got, n), "pelexpire needs %s", n)
	}
	for _, n := range []string{"todeadletter", "admits", "nowms", "covers"} {
		require.False(t, defines(got, n), "pelexpire does not need %s", n)
	}
	post := scriptSendPost.prod.Hash()
	require.NotEqual(t, post, scriptSendPost.test.Hash())
	body, err := scriptFS.ReadFile("scripts/sendpost.lua")
	require.NoError(t, err)
	shaken := lib.shake(string(body))
	require.True(t, defines(shaken, "loadfilters") && defines(shaken, "admits"))
	require.False(t, defines(shaken, "todeadletter") || defines(shaken, "vscore"))
	// The embedded store's builds set EMBEDDED where lib.lua's entry (or
	// anything of it) uses it; the others are the same scripts.
	require.Same(t, scriptWorkers.prod, scriptWorkers.embProd)
	require.NotEqual(t, scriptReceive.prod.Hash(), scriptReceive.embProd.Hash())
	require.NotEqual(t, scriptReceive.test.Hash(), scriptReceive.embTest.Hash())
	// The test build keeps what testclock.lua replaces.
	clock, err := scriptFS.ReadFile("scripts/testclock.lua")
	require.NoError(t, err)
	require.True(t, defines(lib.shake(string(clock)+string(body)), "nowms"))
}
