// Package world holds the templ page that exports the world and previews
// and applies an import. handlers/world fills it in.
package world
