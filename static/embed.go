// Package static holds the console's stylesheet and vendored JavaScript,
// embedded into the binary so that corral ships as one file and serves no
// asset from a CDN.
package static

import "embed"

// FS holds css/, vendor/ and img/; web serves it under /static/.
//
//go:embed css vendor img
var FS embed.FS

// Favicon is the console's icon under /static/; browsers also ask for
// /favicon.ico, which serves the same file.
const Favicon = "/static/img/favicon.svg"

// HTMX is the path of the vendored htmx build under /static/.
const HTMX = "/static/vendor/htmx-2.0.11.min.js"

// Stylesheets are linked from every page's head, in order: the console's
// base, the inventory pages', and the query and drafts pages'. They are
// small and cached, so one set for all pages keeps the head in one place.
var Stylesheets = []string{"/static/css/corral.css", "/static/css/pages.css", "/static/css/query.css"}
