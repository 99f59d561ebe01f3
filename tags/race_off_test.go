//go:build !race

package tags

const raceEnabled = false
