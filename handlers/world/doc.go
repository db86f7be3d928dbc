// Package world serves the console's world page: the world downloaded as
// one JSON file (also GET /api/world for scripts), and an upload imported
// in two steps, a preview (store.PlanImport) and an apply that refuses to
// run when the world moved on since the preview.
package world
