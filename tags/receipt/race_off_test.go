//go:build !race

package receipt

const raceEnabled = false
