"""The lineage explorer in the browser (`lineage ui`): JSON API, web server and the shared front end."""
